import Testing
import FarmCore
import FarmPipeline
import FarmRuntime
import TestSupport

/// The inputs `Scripts/fuzz decode` found, kept in Tests/Fixtures/fuzz/decode/ so that a fixed bug stays fixed.
@Suite("Decode stage fuzz findings")
struct DecodeFuzzFindingsTests {
    static let files = FuzzFindings.files("decode")
    /// The fuzzer's limit (Fuzz/DecodeFuzzer).
    static let limits = DecodeLimits(maxPixels: 4_000_000)

    @Test("the findings are there")
    func present() {
        #expect(!Self.files.isEmpty, "no files in Tests/Fixtures/fuzz/decode")
    }

    @Test("each finding fails with a code and a reason, or decodes within the limit", arguments: files)
    func finding(file: String) throws {
        let bytes = try FileSystem.read(file)
        do {
            let page = try Decoder.decode(bytes, limits: Self.limits)
            #expect(page.image.width * page.image.height <= Self.limits.maxPixels)
            #expect([1, 8, 32].contains(page.image.depth))
            #expect(!page.image.hasColormap)
        } catch {
            #expect(error.stage == "decode")
            #expect([FailureCode.decodeFailed, .imageTooLarge].contains(error.code), "\(error)")
            #expect(!error.message.isEmpty)
        }
    }
}
