import Testing
import TestSupport
import Zlib

/// The page models' compression: a window sized to the input (issue 37, dispatch speed) must still give streams
/// any inflater reads, as small as the full window's.
@Suite("zlib deflate sized to the input")
struct ZlibTests {
    @Test("round trips from 0 bytes to 300 KB, text-like and random, each size of window")
    func roundTrips() throws {
        for size in [0, 1, 100, 250, 300, 511, 700, 5_000, 33_000, 70_000, 300_000] {
            let text = Array(String(repeating: #"{"words":[{"text":"ocrfarm","box":[12,34,56,78]}],"#, count: size / 48 + 1).utf8.prefix(size))
            let random = BadInput.randomBytes(size, seed: UInt64(size))
            for input in [text, random] {
                let packed = Zlib.compress(input)
                #expect(try Zlib.decompress(packed, size: input.count) == input, "\(size) bytes")
            }
        }
    }

    @Test("a small repetitive model compresses to under a third, a large text to under 1%")
    func ratio() throws {
        let model = Array(String(repeating: #"{"text":"the quick brown fox","conf":91.5,"box":[1,2,3,4]},"#, count: 6).utf8)
        let packed = Zlib.compress(model)
        #expect(packed.count < model.count / 3, "\(packed.count) of \(model.count)")
        let big = Array(String(repeating: "line of page text 12345\n", count: 20_000).utf8)
        #expect(Zlib.compress(big).count < big.count / 100)
    }
}
