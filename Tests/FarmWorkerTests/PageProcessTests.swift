@testable import FarmWorker
import FarmCore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 37: how a page whose process died is failed, from the way it ended and what it said last.
@Suite("page process failures")
struct PageProcessTests {
    @Test("SIGABRT after libstdc++'s bad_alloc is out-of-memory, naming the allocation; SIGKILL is out-of-memory; a crash is worker-lost")
    func classification() {
        // What libstdc++ writes before abort() when Tesseract's allocation throws and nothing catches it.
        let words = ["terminate called after throwing an instance of 'std::bad_alloc'", "  what():  std::bad_alloc"]
        let said = words.first { PageProcess.saysAllocationFailed($0) }
        #expect(said == words[0])
        let aborted = PageProcess.failure(status: 128 + SIGABRT, noise: words + ["*** Program crashed: Aborted ***"],
                                          allocationFailure: said)
        #expect(aborted.code == .outOfMemory && aborted.retryable)
        #expect(aborted.message.contains("signal 6 SIGABRT") && aborted.message.contains("std::bad_alloc"), "\(aborted.message)")
        #expect(aborted.message.contains("memory limits: "), "\(aborted.message)")
        let killed = PageProcess.failure(status: 128 + SIGKILL, noise: [], allocationFailure: nil)
        #expect(killed.code == .outOfMemory && killed.message.contains("SIGKILL"))
        let crashed = PageProcess.failure(status: 128 + SIGSEGV, noise: ["*** Program crashed: Bad pointer dereference ***"],
                                          allocationFailure: nil)
        #expect(crashed.code == .workerLost && crashed.retryable && crashed.message.contains("SIGSEGV"))
        #expect(crashed.message.contains("Bad pointer dereference"))
        #expect(!PageProcess.saysAllocationFailed("Tesseract Open Source OCR Engine v5.3.0 with Leptonica"))
    }
}
