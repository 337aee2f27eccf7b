import Testing
import FarmCore
#if canImport(Glibc)
import Glibc
#endif

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

    @Test("whole numbers written in place are String(value), into a ByteWriter and an array")
    func decimalsWritten() {
        var values = [0, 9, 10, 99, 100, 999, 1000, 9999, 10_000, 99_999, 100_000, 999_999, 1_000_000, Int.max, Int.min, -1, -9,
                      -10, -99_999, -100_000, 1_000_000_000_000_000_000, 999_999_999_999_999_999]
        var state: UInt64 = 0x1234_5678_9ABC_DEF1
        for _ in 0..<5_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            values.append(Int(truncatingIfNeeded: state) >> Int(state % 64))
        }
        var writer = ByteWriter(capacity: 1)
        var expected: [UInt8] = []
        for value in values {
            writer.append(decimal: value)
            writer.append(UInt8(ascii: " "))
            expected += Array(String(value).utf8) + [UInt8(ascii: " ")]
            var array: [UInt8] = []
            array.append(decimal: value)
            #expect(array == Array(String(value).utf8))
        }
        #expect(writer.bytes() == expected)
    }

    @Test("halves round away from zero as rounded() does")
    func roundedHalfAway() {
        var values: [Double] = [0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.49999999999999994, -0.49999999999999994, 4503599627370495.5,
                                4503599627370497, 9007199254740992, 1e300, -1e300, .infinity, -.infinity, .nan, .leastNonzeroMagnitude]
        var state: UInt64 = 0x0F1E_2D3C_4B5A_6978
        for _ in 0..<20_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let half = Double(Int64(truncatingIfNeeded: state) >> 20) + 0.5
            values += [Double(bitPattern: state), (Double(state >> 11) / Double(1 << 53) - 0.5) * 2e4, half, half.nextUp, half.nextDown]
        }
        for value in values {
            #expect(value.roundedHalfAway.bitPattern == value.rounded().bitPattern || (value.isNaN && value.roundedHalfAway.isNaN), "\(value)")
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

    @Test("doubles in full (17 digits), exponents and edge cases read bit for bit as strtod reads them")
    func doublesReadAsStrtod() throws {
        var texts = ["0.9312345678901234", "93.12345678901234", "-0.0", "0e0", "0.000", "1e308", "1.7976931348623157e308",
                     "2.2250738585072014e-308", "4.9406564584124654e-324", "2.4703282292062327e-324", "1e-400", "1e-27",
                     "1.2345678901234567e-11", "9.9999999999999999e-28", "1234567890123456789.0", "12345678901234567890.5",
                     "0.12345678901234567890123", "9007199254740993.0", "9007199254740995.0", "4503599627370497.5",
                     "4503599627370496.5", "18014398509481986.0", "1e22", "1e23", "123456789e15", "1.5E+3", "2.5e-5",
                     "0.1", "0.30000000000000004", "100.0", "7.0e-10", "1.00000000000000011102230246251565404236316680908203125"]
        var state: UInt64 = 0x5851_F42D_4C95_7F2D
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state
        }
        func printed(_ value: Double, _ format: String) -> String {
            withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
                _ = withVaList([value]) { vsnprintf(buffer.baseAddress!, 64, format, $0) }
                return String(cString: buffer.baseAddress!)
            }
        }
        for _ in 0..<20_000 {
            // Confidences, timings and maps (what models hold), and doubles of any exponent.
            let unit = Double(next() >> 11) / Double(1 << 53)
            let scaled = unit * [1, 100, 1e-3, 1e-9, 1e6, 1e15, 1e-20][Int(next() % 7)]
            let any = Double(bitPattern: next())
            for value in [scaled, -scaled, any] where value.isFinite {
                texts += [printed(value, "%.17g"), printed(value, "%.16g"), printed(value, "%.15g"), "\(value)"]
            }
            // Exact halves between neighbouring doubles (ties to even) and their near neighbours.
            let whole = (1 << 52) + next() % (1 << 52)
            texts += ["\(whole).5", "\(whole).50", "\(whole).4999", "\(whole).5001", "\(whole * 2 + 1).0", "\(whole * 4 + 2).00"]
            // Long digit strings.
            texts.append("0." + String(repeating: String(next() % 1_000_000_007), count: 1 + Int(next() % 4)))
        }
        for text in texts {
            let value = try JSON.parse(text).doubleValue
            let expected = strtod(text, nil)
            guard expected.isFinite else { continue }
            #expect(value?.bitPattern == expected.bitPattern, "\(text)")
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
