// A count and its noun in the number that agrees with it, for the summary
// lines: "1 area", "2 areas", "0 circles". Scripts that read a summary match
// the digits, not the noun.
func counted(_ n: some BinaryInteger, _ noun: String, plural: String? = nil) -> String {
    "\(n) \(n == 1 ? noun : plural ?? noun + "s")"
}
