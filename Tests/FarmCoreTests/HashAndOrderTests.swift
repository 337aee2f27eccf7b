import Testing
import FarmCore

@Suite("SHA-256, natural order, raw paths")
struct HashAndOrderTests {
    @Test("SHA-256 matches the published test vectors")
    func sha256() {
        #expect(SHA256.hex([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        var hasher = SHA256()
        for _ in 0..<1000 { hasher.update([UInt8](repeating: UInt8(ascii: "a"), count: 1000)) }
        let million = hasher.finalize().map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        #expect(million == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("page2 comes before page10")
    func natural() {
        let names = ["page10.png", "page2.png", "Page1.png", "page2b.png", "cover.png", "page002.png", "appendix"]
        let sorted = names.sorted(by: NaturalOrder.areInIncreasingOrder)
        #expect(sorted == ["appendix", "cover.png", "Page1.png", "page002.png", "page2.png", "page2b.png", "page10.png"])
    }

    @Test("raw paths keep invalid UTF-8 and show it escaped")
    func rawPaths() {
        let path = RawPath(bytes: Array("scans/".utf8) + [0xFF, 0x41] + Array("\nname.png".utf8))
        #expect(path.description == "scans/\\xffA\\nname.png")
        #expect(path.string == nil)
        #expect(RawPath("a/é.png").description == "a/é.png")
        #expect(path.lastComponent == [0xFF, 0x41] + Array("\nname.png".utf8))
    }
}
