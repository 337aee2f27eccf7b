import Testing
import FarmCore

@Suite("Natural order, raw paths")
struct HashAndOrderTests {
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

    @Test("a relative path is made absolute against a folder, its leading ./ dropped; an absolute one is kept")
    func absolutePaths() {
        let folder = RawPath("/data/in")
        #expect(RawPath("scans/a.png").absolute(in: folder) == RawPath("/data/in/scans/a.png"))
        #expect(RawPath("./scans/a.png").absolute(in: folder) == RawPath("/data/in/scans/a.png"))
        #expect(RawPath(".//./a.png").absolute(in: folder) == RawPath("/data/in/a.png"))
        #expect(RawPath(".").absolute(in: folder) == folder)
        #expect(RawPath("/elsewhere/a.png").absolute(in: folder) == RawPath("/elsewhere/a.png"))
        #expect(RawPath(".hidden.png").absolute(in: folder) == RawPath("/data/in/.hidden.png"))
        #expect(RawPath(bytes: [0xFF, 0x41]).absolute(in: folder) == RawPath(bytes: Array("/data/in/".utf8) + [0xFF, 0x41]))
    }

    @Test("bidi formatting characters count as control characters: never shown raw")
    func bidiControls() {
        for scalar: Unicode.Scalar in ["\u{202E}", "\u{202A}", "\u{2066}", "\u{2069}", "\u{200F}", "\u{061C}", "\u{0007}", "\u{009B}"] {
            #expect(scalar.isControlCharacter, "U+\(String(scalar.value, radix: 16))")
        }
        for scalar: Unicode.Scalar in ["a", "é", "中", "\u{200D}", " "] { #expect(!scalar.isControlCharacter) }
    }
}
