@testable import FarmPipeline
import FarmCore
import Leptonica
import Testing

/// Issue 37: a Leptonica call that returns no image because an allocation failed is `out-of-memory` (retryable),
/// not `internal-error` (on main the 49 MP page under a 300 MB address space failed so in orient and dewarp).
@Suite("allocation failures in the stages")
struct AllocationFailureTests {
    @Test("Leptonica's 'malloc fail' in a stage is out-of-memory and retryable; other failures stay internal-error")
    func leptonicaAllocationFailure() {
        // Leptonica's words from the worker's log of that run (orient's 90° turn of the 7000x7000 page).
        let error = LeptonicaError("pixRotateOrth", message: "pixCreateNoInit: pixdata_malloc fail for data; pixCreate: pixd not made; "
                                   + "pixRotate90: pixd not made")
        let failure = error.failure("orient")
        #expect(failure.code == .outOfMemory && failure.retryable && failure.stage == "orient")
        #expect(failure.message.hasPrefix("out of memory: ") && failure.message.contains("pixdata_malloc fail"))
        let other = LeptonicaError("pixRotateOrth", message: "pixRotate90: invalid direction").failure("orient")
        #expect(other.code == .internalError && !other.retryable)
    }
}
