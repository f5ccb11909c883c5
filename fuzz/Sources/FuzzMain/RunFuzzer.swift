// The main of every harness. SwiftPM gives each executable its own main, so
// libFuzzer's cannot be used: this hands argv to libFuzzer's documented
// entry for such programs, LLVMFuzzerRunDriver, which calls `harness` with
// each input that is not empty.
//
//     runFuzzer(fuzzBlob)   // the whole of a harness's main
import CFuzzerDriver
import Glibc

nonisolated(unsafe) private var harness: ((UnsafePointer<UInt8>, Int) -> Int32)?

public func runFuzzer(_ body: @escaping (UnsafePointer<UInt8>, Int) -> Int32) -> Never {
    harness = body
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        guard let data, size > 0, let harness else { return 0 }
        return harness(data, size)
    })
}
