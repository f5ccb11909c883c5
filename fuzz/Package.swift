// swift-tools-version:6.0
// Coverage-guided fuzzing harnesses (libFuzzer) for the parsers that read
// untrusted bytes: the GeoJSON reader, the SpatiaLite BLOB reader, the
// timestamp / TZif / POSIX-rule parsers, and fixes files (CSV, NDJSON). Kept out of the main package so a
// normal build never needs -sanitize=fuzzer. Build and run with
//   bash scripts/fuzz.sh [seconds-per-target]
// which passes -sanitize=fuzzer,address. Each harness's main is
// `runFuzzer(…)` (FuzzMain), which hands argv to libFuzzer's LLVMFuzzerRunDriver
// (SwiftPM owns main, so libFuzzer's can't be used).
import PackageDescription

let package = Package(
    name: "geofence-fuzz",
    dependencies: [.package(name: "geofence", path: "..")],
    targets: [
        .target(name: "CFuzzerDriver"),
        .target(name: "FuzzMain", dependencies: ["CFuzzerDriver"]),
        .executableTarget(name: "FuzzGeoJSON", dependencies: ["FuzzMain", .product(name: "GeofenceCore", package: "geofence")]),
        .executableTarget(name: "FuzzBlob", dependencies: ["FuzzMain", .product(name: "GeofenceCore", package: "geofence")]),
        .executableTarget(name: "FuzzTime", dependencies: ["FuzzMain", .product(name: "GeofenceCore", package: "geofence")]),
        .executableTarget(name: "FuzzFixes", dependencies: ["FuzzMain", .product(name: "GeofenceCore", package: "geofence")]),
    ]
)
