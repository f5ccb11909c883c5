// swift-tools-version:6.0
// Three layers, each its own module (see ARCHITECTURE.md):
//   GeofenceCore       pure Swift geometry, rules, GeoJSON and BLOB codecs; no SQLite
//   GeofenceSQL        the SQL surface: schema, SQL functions, catalog I/O, via sqlite3_api_routines
//   GeofenceExtension  the loadable extension libgeofence.so (entry points only)
//   geofence           the command-line tool (swift-argument-parser)
import PackageDescription

let sanitizing = Context.environment["GEOFENCE_SANITIZE"] != nil

// Release builds skip Swift's run-time exclusivity checks (the compile-time ones
// stay): they cost ~60 ns per SQL function call, and a violation they would
// catch is a trap, which inside a host process must not happen anyway. Debug
// builds, and so the tests, keep them.
let fastRelease: [SwiftSetting] = [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

let package = Package(
    name: "geofence",
    products: [
        .executable(name: "geofence", targets: ["GeofenceCLI"]),
        // Built as libGeofenceExtension.so; scripts/build.sh installs it as libgeofence.so.
        .library(name: "GeofenceExtension", type: .dynamic, targets: ["GeofenceExtension"]),
        // The pure core alone, for other Swift hosts (and the fuzzing harnesses in fuzz/).
        .library(name: "GeofenceCore", targets: ["GeofenceCore"]),
    ],
    dependencies: [
        // Exact: another version changes --help, and so docs/cli.md (checked by a test).
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
    ],
    targets: [
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite"),
        .target(name: "GeofenceCore", swiftSettings: fastRelease),
        .target(name: "GeofenceSQL", dependencies: ["CSQLite", "GeofenceCore"], swiftSettings: fastRelease),
        // The Arrow C Data Interface's two structs (a header written from the specification), for gf_task_judge.
        .target(name: "CArrow"),
        .target(
            name: "GeofenceExtension",
            dependencies: ["GeofenceSQL", "CArrow"],
            exclude: ["exports.map"],
            linkerSettings: [
                // Any direct sqlite3_* call would bypass the host's SQLite: make it a link error.
                // (Not in sanitizer builds, scripts/sanitize.sh: their runtime lives in the executable.)
                .unsafeFlags(sanitizing ? [] : ["-Xlinker", "-z", "-Xlinker", "defs"]),
                // Export only the entry points, so our Swift symbols never clash with the host's.
                .unsafeFlags(["-Xlinker", "--version-script=Sources/GeofenceExtension/exports.map"]),
                // Self-contained .so: loads in a plain sqlite3 shell on a machine without Swift.
                .unsafeFlags(["-static-stdlib"], .when(configuration: .release)),
            ]
        ),
        // Opens databases in a process that links libsqlite3 itself (the CLI, the tests).
        .target(name: "GeofenceHost", dependencies: ["GeofenceSQL"], linkerSettings: [.linkedLibrary("sqlite3")]),
        .executableTarget(
            name: "GeofenceCLI",
            dependencies: ["GeofenceHost", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Sources/geofence"
        ),
        .testTarget(name: "GeofenceCoreTests", dependencies: ["GeofenceCore"]),
        .testTarget(
            name: "GeofenceSQLTests",
            dependencies: ["GeofenceHost"]
        ),
    ]
)
