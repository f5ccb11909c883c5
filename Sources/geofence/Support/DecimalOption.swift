import ArgumentParser
import GeofenceCore

/// Reads a number option (`--lat`, `--accuracy`, …) as every data file's
/// numbers are read: spaces at its ends dropped, then decimal only
/// (`NumberText`), so `--lat 0x10` is refused rather than taken as 16.
/// Range checks come after, in each command.
func decimalOption(_ text: String) throws -> Double {
    guard let value = NumberText.double(text.trimmingEdgeSpaces()) else {
        throw ValidationError("\(Echo.quoted(text)) is not a decimal number")
    }
    return value
}
