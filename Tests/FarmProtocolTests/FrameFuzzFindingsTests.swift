import Testing
import FarmCore
import FarmProtocol
import FarmRuntime
import TestSupport

/// The inputs `Scripts/fuzz frame` found, kept in Tests/Fixtures/fuzz/frame/ so that a fixed bug stays fixed.
@Suite("Frame decoder fuzz findings")
struct FrameFuzzFindingsTests {
    static let files = FuzzFindings.files("frame")

    @Test("the findings are there")
    func present() {
        #expect(!Self.files.isEmpty, "no files in Tests/Fixtures/fuzz/frame")
    }

    @Test("each finding is refused with a reason, or decodes to a message the encoder writes back", arguments: files)
    func finding(file: String) throws {
        let frames = FuzzFrames.split(try FileSystem.read(file))
        let message: Message
        do {
            message = try FrameCodec.decode(frames)
        } catch {
            #expect(error.description.count > error.kind.count, "\(error)")
            return
        }
        let once = try FrameCodec.decode(FrameCodec.encode(message))
        #expect(try FrameCodec.decode(FrameCodec.encode(once)) == once)
    }
}
