import Testing
import FarmCore
import Foundation
import FarmRuntime

/// Log lines: one event per line whatever the values hold, parseable back to the same fields.
@Suite("Log rendering")
struct LogTests {
    /// Values a log line meets: file names with spaces and quotes, error texts with newlines, a terminal escape,
    /// bytes that were not UTF-8 (decoded with replacement characters), a value that looks like another field.
    static let awkward: [(String, String)] = [
        ("plain", "page-too-large"),
        ("empty", ""),
        ("space", "scan 12.tif"),
        ("quote", "the \"best\" scan"),
        ("backslash", #"C:\scans\a.tif"#),
        ("newline", "line one\nline two\r\n"),
        ("tab", "a\tb"),
        ("escape", "\u{1B}[2Jcleared"),
        ("nul", "a\u{0}b"),
        ("c1", "next\u{85}line"),
        ("separator", "a\u{2028}b"),
        ("forged", "x level=error msg=forged"),
        ("equals", "a=b"),
        ("notUTF8", String(decoding: [0x66, 0xFF, 0xFE, 0x6F, 0xC3], as: UTF8.self)),
        ("unicode", "Grüße 北京 🙂"),
    ]

    @Test("logfmt: plain words stay bare, everything else is quoted and escaped onto one line")
    func logfmtQuoting() {
        #expect(Log.quoted("page-too-large") == "page-too-large")
        #expect(Log.quoted("12") == "12")
        #expect(Log.quoted("") == "\"\"")
        #expect(Log.quoted("scan 12.tif") == "\"scan 12.tif\"")
        #expect(Log.quoted("the \"best\" scan") == #""the \"best\" scan""#)
        #expect(Log.quoted(#"C:\a"#) == #""C:\\a""#)
        #expect(Log.quoted("one\ntwo\r") == #""one\ntwo\r""#)
        #expect(Log.quoted("a\tb") == #""a\tb""#)
        #expect(Log.quoted("\u{1B}[2J") == #""\u001b[2J""#)
        #expect(Log.quoted("a\u{85}b") == #""a\u0085b""#)
        #expect(Log.quoted("a\u{2028}b") == #""a\u2028b""#)
        #expect(Log.quoted("a=b") == "\"a=b\"")
        #expect(Log.quoted("Grüße") == "Grüße")
    }

    @Test("logfmt: a line of awkward values is one line of printable text and parses back to the same fields")
    func logfmtRoundTrip() throws {
        let line = Log.render(Self.awkward, format: .logfmt)
        #expect(!line.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0.value == 0x2028 })
        let parsed = try Self.parseLogfmt(line)
        #expect(parsed.map(\.0) == Self.awkward.map(\.0))
        #expect(parsed.map(\.1) == Self.awkward.map(\.1))
        // The forged fields stay inside their value.
        #expect(parsed.filter { $0.0 == "level" }.isEmpty)
    }

    @Test("JSON: each line is one object that JSONSerialization reads back to the same fields, in order")
    func jsonLines() throws {
        let line = Log.render(Self.awkward, format: .json)
        #expect(!line.contains("\n") && !line.contains("\r"))
        #expect(!line.unicodeScalars.contains { $0.value < 0x20 })
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        #expect(object.count == Self.awkward.count)
        for (key, value) in Self.awkward {
            #expect(object[key] == value, "\(key)")
        }
        #expect(line.hasPrefix("{\"plain\":\"page-too-large\""))
    }

    /// A strict logfmt reader for the test: KEY=VALUE separated by single spaces, VALUE bare or quoted with
    /// \" \\ \n \r \t \uXXXX escapes. Anything else is an error, so a sloppy rendering cannot pass.
    static func parseLogfmt(_ line: String) throws -> [(String, String)] {
        struct Malformed: Error { let at: String }
        var scalars = Substring(line).unicodeScalars[...]
        var pairs: [(String, String)] = []
        while !scalars.isEmpty {
            guard let equals = scalars.firstIndex(of: "=") else { throw Malformed(at: String(scalars)) }
            let key = String(scalars[..<equals])
            guard !key.isEmpty, !key.unicodeScalars.contains(where: { $0 == " " || $0 == "\"" }) else {
                throw Malformed(at: String(scalars))
            }
            scalars = scalars[scalars.index(after: equals)...]
            var value = String.UnicodeScalarView()
            if scalars.first == "\"" {
                scalars = scalars.dropFirst()
                while true {
                    guard let scalar = scalars.popFirst() else { throw Malformed(at: "unterminated value of \(key)") }
                    if scalar == "\"" { break }
                    guard scalar == "\\" else { value.append(scalar); continue }
                    switch scalars.popFirst() {
                    case "\"": value.append("\"")
                    case "\\": value.append("\\")
                    case "n": value.append("\n")
                    case "r": value.append("\r")
                    case "t": value.append("\t")
                    case "u":
                        let hex = String(String.UnicodeScalarView(scalars.prefix(4)))
                        guard hex.count == 4, let code = UInt32(hex, radix: 16), let decoded = Unicode.Scalar(code) else {
                            throw Malformed(at: "bad \\u in \(key)")
                        }
                        value.append(decoded)
                        scalars = scalars.dropFirst(4)
                    default: throw Malformed(at: "bad escape in \(key)")
                    }
                }
            } else {
                while let scalar = scalars.first, scalar != " " {
                    guard scalar != "\"", scalar != "=" else { throw Malformed(at: "bare value of \(key)") }
                    value.append(scalar)
                    scalars = scalars.dropFirst()
                }
            }
            pairs.append((key, String(value)))
            if scalars.first == " " {
                scalars = scalars.dropFirst()
                guard !scalars.isEmpty else { throw Malformed(at: "trailing space") }
            } else if !scalars.isEmpty {
                throw Malformed(at: String(scalars))
            }
        }
        return pairs
    }
}
