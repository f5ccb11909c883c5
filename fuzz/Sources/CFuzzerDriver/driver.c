// Empty: the module only declares libFuzzer's LLVMFuzzerRunDriver.
