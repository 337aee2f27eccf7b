import Testing
import FarmCore
@testable import FarmExport

@Suite("safe export names from document names")
struct SafeNameTests {
    @Test("path traversal and separators never survive: one component, never empty, '.' or '..'",
          arguments: [
              ("../../etc/evil", "etc_evil"), ("/etc/passwd", "etc_passwd"), ("a/b", "a_b"), ("a\\b", "a_b"),
              ("./x", "x"), ("..", "document"), (".", "document"), ("/", "document"), ("", "document"),
              ("../", "document"), ("a/../../b", "a_b"), ("..\\..\\windows\\system32", "windows_system32"),
              ("/scans/box 7/p1.tif", "scans_box 7_p1"), ("...", "document"),
          ])
    func traversal(name: String, expected: String) {
        let safe = SafeName.make(name)
        #expect(safe == expected)
        #expect(SafeName.isSingleComponent(safe))
    }

    @Test("control characters, separators of lines and bidirectional overrides become _; ends are trimmed",
          arguments: [
              ("a\u{0}b", "a_b"), ("tab\there", "tab_here"), ("bell\u{7}", "bell_"), ("\u{1B}[31mred", "_[31mred"),
              ("report\n", "report"), ("  spaced  ", "spaced"), ("line\u{2028}break", "line_break"),
              ("invoice\u{202E}fdp.exe", "invoice_fdp.exe"), ("c1\u{85}x", "c1_x"), ("del\u{7F}", "del_"),
              ("bom\u{FEFF}", "bom_"), ("nonchar\u{FFFF}", "nonchar_"),
          ])
    func controls(name: String, expected: String) {
        #expect(SafeName.make(name) == expected)
    }

    @Test("Unicode letters, emoji and joiners are kept as they are",
          arguments: ["报告 2024", "Ünïcödé 😀", "می‌خواهم", "👨‍👩‍👧 family", "Ελληνικά", "日本語の文書"])
    func unicodeKept(name: String) {
        #expect(SafeName.make(name) == name)
    }

    @Test("Windows: reserved characters become _, device names get a _ in front, no dot or space at the end",
          arguments: [
              ("a:b*c?d", "a_b_c_d"), ("\"quoted\" <x> |y|", "_quoted_ _x_ _y_"), ("CON", "_CON"), ("nul.txt", "_nul.txt"),
              ("COM1.pdf", "_COM1"), ("lpt9", "_lpt9"), ("CONTRACT", "CONTRACT"), ("name. . .", "name"),
          ])
    func windows(name: String, expected: String) {
        #expect(SafeName.make(name) == expected)
    }

    @Test("the submitted file's extension is dropped (the export adds its own), so no safe name ends in .pdf",
          arguments: [("scan.TIF", "scan"), ("x.pdf.pdf", "x"), ("report.pdf ", "report"), ("a.pdf.", "a"),
                      ("photo.jpeg", "photo"), ("notes.v2", "notes.v2"), ("archive.tar", "archive.tar"), (".pdf", "document")])
    func extensions(name: String, expected: String) {
        let safe = SafeName.make(name)
        #expect(safe == expected)
        #expect(!safe.lowercased().hasSuffix(".pdf"))
    }

    @Test("no hidden files and no names read as options or home folders", arguments: [
        (".hidden", "_hidden"), ("-rf", "_rf"), ("~root", "_root"), ("..foo", "_.foo"),
    ])
    func leading(name: String, expected: String) {
        #expect(SafeName.make(name) == expected)
    }

    @Test("long names keep their start and their end around …, cut between characters, within the byte limit")
    func long() {
        let ascii = SafeName.make(String(repeating: "a", count: 1000) + "-END")
        #expect(ascii.utf8.count <= SafeName.maximumBytes)
        #expect(ascii.hasPrefix("aaaa") && ascii.hasSuffix("aaa-END") && ascii.contains("…"))
        // Two deep paths that differ only in their file names stay apart.
        let folder = String(repeating: "archive/box/", count: 30)
        #expect(SafeName.make(folder + "scan-0001.tif") != SafeName.make(folder + "scan-0002.tif"))
        #expect(SafeName.make(folder + "scan-0001.tif").hasSuffix("_scan-0001"))
        // Multi-byte characters and combining sequences are never split.
        let chinese = SafeName.make(String(repeating: "汉字", count: 200))
        #expect(chinese.utf8.count <= SafeName.maximumBytes)
        #expect(chinese.allSatisfy { $0 == "汉" || $0 == "字" || $0 == "…" })
        let decomposed = SafeName.make(String(repeating: "e\u{301}", count: 300))
        #expect(decomposed.utf8.count <= SafeName.maximumBytes)
        #expect(decomposed.unicodeScalars.first == "e")
        #expect(decomposed.allSatisfy { $0 == "é" || $0 == "…" })
        // Exactly at the limit: kept whole.
        let limit = String(repeating: "b", count: SafeName.maximumBytes)
        #expect(SafeName.make(limit) == limit)
    }

    @Test("hostile bytes in any order always give one safe component (10,000 generated names)")
    func generated() {
        let alphabet: [String] = ["/", "\\", ".", "..", "\0", "\n", "\u{1B}", "\u{202E}", " ", "a", "Z", "汉", "😀", ":", "*",
                                  "-", "~", "pdf", "CON", "é", "e\u{301}", "\u{200D}", "\u{7F}", "\u{9F}"]
        var state: UInt64 = 42
        func next() -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int(state >> 33)
        }
        for _ in 0..<10_000 {
            let name = (0..<(next() % 80)).map { _ in alphabet[next() % alphabet.count] }.joined()
            let safe = SafeName.make(name)
            #expect(SafeName.isSingleComponent(safe), "\(RawPath(name)) → \(RawPath(safe))")
            #expect(!safe.hasPrefix(".") && !safe.hasPrefix("-") && safe.utf8.count <= SafeName.maximumBytes)
            #expect(!safe.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0 == "\u{202E}" })
            #expect(!safe.hasSuffix(".") && !safe.hasSuffix(" ") && !safe.lowercased().hasSuffix(".pdf"))
            #expect(SafeName.make(name) == safe)
        }
    }
}

@Suite("distinct export names")
struct ExportNamesTests {
    func names(_ documents: [(String, Int64)]) -> [String] {
        var names = ExportNames()
        return documents.map { names.name(for: $0.0, id: DocumentID($0.1)) }
    }

    @Test("names whose safe forms collide, ignoring case, get ~ID after all but the first (lowest id)")
    func collisions() {
        let given = names([("a/b", 1), ("a_b", 2), ("Report", 3), ("report", 4), ("a_b~2", 5), ("", 6), ("..", 7),
                           ("scan.tif", 8), ("scan.pdf", 9), ("same", 10), ("same", 11)])
        #expect(given == ["a_b", "a_b~2", "Report", "report~4", "a_b~2~5", "document", "document~7", "scan", "scan~9",
                          "same", "same~11"])
        #expect(Set(given.map { $0.lowercased() }).count == given.count)
        for name in given { #expect(SafeName.isSingleComponent(name)) }
    }

    @Test("the same documents in the same order get the same names in every run")
    func deterministic() {
        let documents: [(String, Int64)] = (1...500).map { ("dir/\($0 % 37)/page.png", Int64($0)) }
        let first = names(documents)
        #expect(first == names(documents))
        #expect(Set(first).count == 500)
        // A document's name depends only on those before it: adding later documents changes no earlier name.
        #expect(Array(names(documents + [("dir/1/page.png", 501)]).prefix(500)) == first)
    }
}
