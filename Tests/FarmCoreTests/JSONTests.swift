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

    @Test("a number written rounded to its places is the text of the rounded .double")
    func roundedWriteMatchesDouble() {
        var values: [Double] = [
            0, -0.0, 0.05, -0.05, 0.004, -0.004, 0.0001, 0.00005, -0.00005, 0.1 + 0.2, 99.995, 95.4567, 1.25, -1.25, 2.675,
            1e13 + 0.5, 999_999_999_999.99, 1e15, -1e15, 1e16, 123.456, -123.456, 7, -7, 0.5, .infinity, .nan,
        ]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<10_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let unit = Double(state >> 11) / Double(1 << 53)
            let magnitude = [1.0, 10, 100, 1000, 1e5, 1e9, 1e13][Int(state % 7)]
            values.append((unit - 0.3) * magnitude)
        }
        for value in values {
            for places in 0...5 {
                var out: [UInt8] = []
                JSON.write(value, places: places, into: &out)
                #expect(String(decoding: out, as: UTF8.self) == JSON.rounded(value, places: places).rendered, "\(value) \(places)")
            }
        }
    }

    @Test("decimals read as Double(text) reads them")
    func decimalsReadExactly() throws {
        var texts = ["0.1", "-0.0", "0.30000000000000004", "95.46", "-95.46", "123456789012.345", "9007199254740.993",
                     "0.000000000000001", "1.5e3", "01.5", "2.675", "99999999999999.9", "999999999999999.9"]
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        for _ in 0..<5_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let digits = String(state >> 1).prefix(Int(state % 16) + 2)
            let point = Int(state >> 60) % (digits.count - 1) + 1
            texts.append((state & 2 == 0 ? "-" : "") + digits.prefix(point) + "." + digits.dropFirst(point))
        }
        for text in texts {
            let value = try JSON.parse(text).doubleValue
            #expect(value?.bitPattern == Double(text)?.bitPattern, "\(text)")
        }
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

    @Test("a string reads back exactly when String(validating:) takes its bytes, in values and in keys", arguments: [
        [0x41, 0x62], [0xC3, 0xA9], [0xE4, 0xB8, 0xAD, 0x41], [0xEF, 0xBF, 0xBD], [0xF0, 0x9F, 0x98, 0x80],
        [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0x41, 0xF5, 0x80, 0x80, 0x80], [0x80], [0xF0, 0x9F, 0x98],
    ] as [[UInt8]])
    func validation(_ bytes: [UInt8]) throws {
        let expected = String(validating: bytes, as: UTF8.self)
        let value = try? JSON.parse([0x22] + bytes + [0x22])
        #expect(value == expected.map { JSON.string($0) })
        // As a key read by its bytes (JSONReader.object(keyBytes:)): the same bytes, or the same refusal.
        var reader = JSONReader([0x7B, 0x22] + bytes + Array("\":1}".utf8))
        var keys: [[UInt8]] = []
        let read: Void? = try? reader.object(keyBytes: { reader, key in
            keys.append(Array(key))
            _ = try reader.int()
        })
        #expect((read != nil) == (expected != nil))
        if expected != nil { #expect(keys == [bytes]) }
    }

    @Test("keys read by their bytes are the keys object(_:) reads, escapes decoded")
    func keyBytes() throws {
        let text = Array(#"{"t": 1, "caf\u00e9": 2, "a\"b": 3, "中": 4, "": 5}"#.utf8)
        var byString = JSONReader(text), byBytes = JSONReader(text)
        var strings: [String] = [], bytes: [String] = [], values: [Int] = []
        try byString.object { reader, key in
            strings.append(key)
            _ = try reader.int()
        }
        try byBytes.object(keyBytes: { reader, key in
            bytes.append(String(decoding: key, as: UTF8.self))
            values.append(try reader.int())
        })
        #expect(strings == ["t", "café", "a\"b", "中", ""])
        #expect(bytes == strings)
        #expect(values == [1, 2, 3, 4, 5])
        let atEnd = byBytes.isAtEnd()
        #expect(atEnd)
    }
}
