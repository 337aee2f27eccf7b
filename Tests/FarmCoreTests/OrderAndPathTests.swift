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
}
