// libFuzzer's documented entry for programs that have their own main
// (SwiftPM gives every executable one): runs the fuzzing loop with argv.
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
