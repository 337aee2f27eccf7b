import Testing
import FarmCore

@Suite("JSON")
struct JSONTests {
    @Test("renders in key order and parses back to the same value")
    func roundTrip() throws {
        let value: JSON = [
            "text": "line 1\nline \"2\" \\ tab\t é 世界 \u{1}",
            "count": 42,
            "ratio": 0.25,
            "negative": -7,
            "flags": [true, false, nil],
            "nested": ["empty": [], "object": [:]],
        ]
        let text = value.rendered
        #expect(text.hasPrefix("{\"text\":"))
        #expect(text.contains("\\u0001"))
        #expect(try JSON.parse(text) == value)
        #expect(try JSON.parse(value.pretty) == value)
    }

    @Test("numbers keep integers exact and print whole doubles without a fraction")
    func numbers() throws {
        #expect(JSON.int(Int64.max).rendered == "9223372036854775807")
        #expect(JSON.double(3).rendered == "3")
        #expect(JSON.double(2.5).rendered == "2.5")
        #expect(JSON.rounded(95.4567).rendered == "95.46")
        #expect(try JSON.parse("1e3").doubleValue == 1000)
        #expect(try JSON.parse("-0.5").doubleValue == -0.5)
        #expect(try JSON.parse("12").intValue == 12)
    }

    @Test("escapes: unicode and surrogate pairs decode")
    func escapes() throws {
        #expect(try JSON.parse(#""\u00e9\ud83d\ude00\n""#).stringValue == "é😀\n")
    }

    @Test("malformed text fails with the byte offset", arguments: [
        "", "{", "[1,]", "{\"a\" 1}", "\"unterminated", "tru", "{\"a\":1}x", "01x", "\"\\q\"", "[\"\u{1}\"]", "\"\\ud800\"",
    ])
    func malformed(text: String) {
        #expect(throws: JSONParseError.self) { try JSON.parse(text) }
    }

    @Test("nesting deeper than the limit is refused instead of exhausting the stack")
    func depthLimit() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONParseError.self) { try JSON.parse(deep) }
        #expect(try JSON.parse("[[[1]]]", maxDepth: 3) == [[[1]]])
    }

    @Test("invalid UTF-8 inside a string is refused")
    func invalidUTF8() {
        #expect(throws: JSONParseError.self) { try JSON.parse([0x22, 0xFF, 0xFE, 0x22]) }
    }
}
