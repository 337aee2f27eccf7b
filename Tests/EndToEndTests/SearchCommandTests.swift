import Testing
import FarmCore
import FarmAnalysis
@testable import FarmStore
import SQLite
import TestSupport
import Foundation

/// One store read by a real farm (`ocrfarm run`, real Tesseract) and shared by the search and keywords tests:
/// the Chinese sample page, the two clean English pages as documents of their own, a document "twice" made of two
/// copies of clean-001 and one of clean-000, and a document submitted but never read.
final class ReadStore: @unchecked Sendable {
    static let shared = Result { try ReadStore() }

    let folder = TemporaryDirectory("search-e2e")
    let path: String
    let samples = Fixtures.packageRoot + "/Samples/pages/"
    // Documents are named by their file name; the paths are what was submitted.
    let cjk = "cjk-000.png"
    let clean0 = "clean-000.png"
    let clean1 = "clean-001.png"
    let unread = "photo-000.jpg"
    func file(_ name: String) -> String { samples + name }

    init() throws {
        path = folder.file("farm.db")
        let runs = [
            ["--lang", "chi_sim+eng", file(cjk)],
            [file(clean0), file(clean1)],
        ]
        for arguments in runs {
            let run = try Run.ocrfarm(["run", "--store", path, "--workers", "2"] + arguments)
            guard run.status == 0 else { throw StoreError("ocrfarm run \(arguments) failed: \(run.stderr)") }
        }
        let copies = folder.file("copies")
        try FileManager.default.createDirectory(atPath: copies, withIntermediateDirectories: true)
        for (name, source) in [("a.png", file(clean1)), ("b.png", file(clean1)), ("c.png", file(clean0))] {
            try FileManager.default.copyItem(atPath: source, toPath: copies + "/" + name)
        }
        let twice = try Run.ocrfarm(["run", "--store", path, "--workers", "2", "--document", "twice", "--force",
                                     copies + "/a.png", copies + "/b.png", copies + "/c.png"])
        guard twice.status == 0 else { throw StoreError("ocrfarm run twice failed: \(twice.stderr)") }
        let submit = try Run.ocrfarm(["submit", "--store", path, file(unread)])
        guard submit.status == 0 else { throw StoreError("ocrfarm submit failed: \(submit.stderr)") }
    }
}

@Suite("ocrfarm search and keywords (end to end, real farm and Tesseract)")
struct SearchCommandTests {
    func store() throws -> ReadStore { try ReadStore.shared.get() }

    func search(_ arguments: [String]) throws -> ProcessOutput {
        try Run.ocrfarm(["search", "--store", try store().path] + arguments)
    }

    /// The documents of the hits in a text output (lines that do not start with spaces, after the header).
    func documents(_ output: ProcessOutput) -> [String] {
        output.text.split(separator: "\n").dropFirst().filter { !$0.hasPrefix(" ") }
            .map { String($0.split(separator: "  ")[0]) }
    }

    func json(_ output: ProcessOutput) throws -> JSON { try JSON.parse(Array(output.stdout)) }

    @Test("an English word: every page that has it, with document, page and the match marked in the snippet")
    func word() throws {
        let store = try store()
        let output = try search(["software"])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.text.hasPrefix("6 pages match, best first:"), "\(output.text)")
        let found = documents(output)
        #expect(Set(found) == [store.cjk, store.clean0, store.clean1, "twice"], "\(output.text)")
        #expect(found.filter { $0 == "twice" }.count == 3)
        #expect(output.text.contains("[software]") || output.text.contains("[Software]"), "\(output.text)")
        #expect(output.text.contains("\(store.clean1)  page 1  (\(store.file(store.clean1)))\n"), "\(output.text)")
        // The pages of "twice" name their source files.
        #expect(output.text.contains("twice  page 2  (\(store.folder.file("copies/b.png")))"), "\(output.text)")
        #expect(!output.text.contains("\u{1B}["), "no terminal bold when stdout is a pipe")
    }

    @Test("a phrase, a prefix, AND, OR, NOT and parentheses")
    func operators() throws {
        let store = try store()
        func found(_ query: String) throws -> Set<String> {
            let output = try search([query, "--limit", "50"])
            #expect(output.status == 0 || output.status == 1, "\(query): \(output.stderr)")
            return Set(documents(output))
        }
        #expect(try found("\"free software\"") == [store.clean1, "twice"])
        #expect(try found("\"software free\"").isEmpty)
        #expect(try found("disclaim*") == [store.clean0, store.clean1, "twice"])
        #expect(try found("Analect*") == [store.cjk])
        #expect(try found("soft*") == found("software"))
        #expect(try found("GnuPG OR Analects") == [store.clean1, "twice", store.cjk])
        #expect(try found("software AND GnuPG") == [store.clean1, "twice"])
        #expect(try found("software NOT GnuPG") == [store.clean0, "twice", store.cjk])
        #expect(try found("software NOT (GnuPG OR Analects)") == [store.clean0, "twice"])
        let phrase = try search(["\"free software\""])
        #expect(phrase.text.contains("[free software]"), "\(phrase.text)")
    }

    @Test("Chinese: two-character words and any run of characters find the Chinese page, marked as one match")
    func chinese() throws {
        let store = try store()
        for query in ["论语", "君子", "万物", "上善若水", "己所不欲"] {
            let output = try search([query])
            #expect(output.status == 0, "\(query): \(output.stderr)")
            #expect(documents(output) == [store.cjk], "\(query): \(output.text)")
            #expect(output.text.contains("[\(query)]"), "\(query): \(output.text)")
            #expect(!output.text.contains("\u{200B}"), "the index's separators are not shown")
        }
        let both = try search(["论语 Analects"])
        #expect(documents(both) == [store.cjk])
        #expect(try search(["君子 GnuPG"]).status == 1, "no page has both")
    }

    @Test("--document (by name, by the path submitted, or by file name), --limit")
    func documentAndLimit() throws {
        let store = try store()
        let byPath = try search(["software", "--document", store.file(store.clean1)])
        #expect(documents(byPath) == [store.clean1], "\(byPath.text)")
        let byName = try search(["software", "--document", "clean-000.png", "--document", "twice"])
        #expect(Set(documents(byName)) == [store.clean0, "twice"] && documents(byName).count == 4, "\(byName.text)")
        let limited = try search(["software", "--limit", "2"])
        #expect(limited.text.hasPrefix("6 pages match; the best 2:"), "\(limited.text)")
        #expect(documents(limited).count == 2)
        let unknown = try search(["software", "--document", "nothing.pdf"])
        #expect(unknown.status == 66 && unknown.stderr.contains("no document named 'nothing.pdf'"), "\(unknown.stderr)")
        #expect(try search(["software", "--limit", "0"]).status == 64)
    }

    @Test("--json: stable keys, hits ranked by bm25, snippets marked with brackets")
    func json() throws {
        let store = try store()
        let output = try search(["software", "--json", "--limit", "4"])
        #expect(output.status == 0, "\(output.stderr)")
        let root = try json(output)
        #expect(root.objectValue?.map(\.0) == ["query", "total", "order", "hits", "documents_named"])
        #expect(root["query"]?.stringValue == "software" && root["total"]?.intValue == 6)
        #expect(root["order"]?.stringValue == "relevance")
        let hits = try #require(root["hits"]?.arrayValue)
        #expect(hits.count == 4)
        for hit in hits {
            #expect(hit.objectValue?.map(\.0) == ["document", "document_id", "page", "page_id", "source", "source_page",
                                                 "snippet", "rank"])
            #expect(hit["snippet"]?.stringValue?.lowercased().contains("[software]") == true)
            #expect((hit["page_id"]?.intValue ?? 0) > 0 && (hit["page"]?.intValue ?? 0) >= 1)
        }
        let ranks = hits.compactMap { $0["rank"]?.doubleValue }
        #expect(ranks.count == 4 && ranks == ranks.sorted(), "\(ranks)")
        let chinese = try json(try search(["君子", "--json"]))
        #expect(chinese["hits"]?[0]?["document"]?.stringValue == store.cjk)
        #expect(chinese["hits"]?[0]?["snippet"]?.stringValue?.contains("[君子]") == true)
        let none = try search(["zebra", "--json"])
        #expect(none.status == 1)
        #expect(try json(none)["hits"] == .array([]) && json(none)["total"]?.intValue == 0)
    }

    @Test("no match: exit 1 with 'no pages match', like grep")
    func noMatch() throws {
        let output = try search(["zebra"])
        #expect(output.status == 1)
        #expect(output.text == "no pages match zebra\n")
    }

    @Test("a malformed query is a usage error that says what is wrong, never SQL", arguments: [
        ("\"free software", "unbalanced quote"),
        ("software AND", "AND needs a word after it"),
        ("OR", "OR needs a word before it"),
        ("NOT GnuPG", "NOT needs a word before it"),
        ("(software", "unbalanced parenthesis"),
        ("software)", "unbalanced parenthesis"),
        ("s*", "too short a prefix"),
        ("so*ft", "* marks a prefix"),
        ("...", "no letters or digits"),
        ("\"\"", "empty phrase"),
    ])
    func malformed(query: String, reason: String) throws {
        let output = try search([query])
        #expect(output.status == 64, "\(query): \(output.stderr)")
        #expect(output.stderr.contains("bad query '\(query)': ") && output.stderr.contains(reason), "\(output.stderr)")
        #expect(output.stderr.contains("Usage: ocrfarm search QUERY"))
        for leak in ["fts5", "SQL", "syntax error", "sqlite"] {
            #expect(!output.stderr.contains(leak), "\(query): \(output.stderr)")
        }
        #expect(output.text.isEmpty)
    }

    @Test("text that means something to FTS5 is searched as text")
    func specialCharacters() throws {
        for query in ["body:software", "NEAR(software license)", "software^", "license -software", "software:"] {
            // After --, a query that starts with - is not taken for an option.
            let output = try search(["--", query])
            #expect(output.status == 0 || output.status == 1, "\(query): \(output.stderr)")
            #expect(output.stderr.isEmpty, "\(query): \(output.stderr)")
        }
    }

    @Test("a store from before the search index is indexed once when search opens it")
    func oldStore() throws {
        let folder = TemporaryDirectory("search-old")
        let path = folder.file("old.db")
        do {
            let connection = try Connection(path: path)
            try Migrator(Array(Schema.migrations.prefix(1))).migrate(connection)
            try connection.execute("""
                INSERT INTO documents (id, name, source, page_count, submitted_at) VALUES (1, 'letters', X'2F6C', 1, 0);
                INSERT INTO pages (id, document_id, number, source_path, source_index, source_kind, state, priority, updated_at)
                VALUES (1, 1, 1, X'2F6C', 0, 'image', 'done', 0, 0);
                INSERT INTO results (page_id, attempt, worker_id, engine, text, mean_confidence, width, height, structure,
                                     timings, finished_at)
                VALUES (1, 1, 'w', 'tesseract', 'Dear archivist, 君子务本', 90, 1, 1, X'7B7D', '{}', 0);
                """)
        }
        let output = try Run.ocrfarm(["search", "--store", path, "君子"])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.text.contains("letters  page 1") && output.text.contains("[君子]"), "\(output.text)")
        #expect(try Connection(path: path, mode: .readOnly).userVersion == Schema.migrations.count, "migrated to the newest schema")
        #expect(try Run.ocrfarm(["search", "--store", path, "archivist"]).status == 0)
    }

    @Test("no store: exit 66 naming it")
    func noStore() throws {
        let folder = TemporaryDirectory("search-none")
        let output = try Run.ocrfarm(["search", "--store", folder.file("missing.db"), "word"])
        #expect(output.status == 66 && output.stderr.contains("missing.db"), "\(output.stderr)")
        let keywords = try Run.ocrfarm(["keywords", "--store", folder.file("missing.db")])
        #expect(keywords.status == 66)
    }

    // MARK: keywords

    func keywords(_ arguments: [String] = []) throws -> ProcessOutput {
        try Run.ocrfarm(["keywords", "--store", try store().path] + arguments)
    }

    /// Each document's keywords and page counts from `keywords --json --limit 0`.
    func keywordTable() throws -> [String: [(String, Int)]] {
        let output = try keywords(["--json", "--limit", "0"])
        #expect(output.status == 0, "\(output.stderr)")
        var table: [String: [(String, Int)]] = [:]
        for document in try json(output)["documents"]?.arrayValue ?? [] {
            table[document["document"]?.stringValue ?? ""] = (document["keywords"]?.arrayValue ?? []).map {
                ($0["keyword"]?.stringValue ?? "", $0["pages"]?.intValue ?? 0)
            }
        }
        return table
    }

    @Test("keywords: a line per document, Chinese multi-character keywords, no English stop words")
    func keywordLines() throws {
        let store = try store()
        let output = try keywords()
        #expect(output.status == 0, "\(output.stderr)")
        let lines = output.text.split(separator: "\n").map(String.init)
        #expect(lines.count == 5, "\(output.text)")
        #expect(lines[0].hasPrefix("\(store.cjk)  (1/1 pages read): "), "\(lines[0])")
        #expect(lines.contains("\(store.unread)  (0/1 pages read): no pages read yet"), "\(output.text)")
        // A one-page document has at most Keywords.limit keywords: all shown; "twice" has more (three pages).
        #expect(lines.contains { $0.hasPrefix("twice  (3/3 pages read): ") && $0.hasSuffix(", …") }, "\(lines)")
        // A keyword is followed by its number of pages only when it is on more than one (issue 36: "(1)" after every
        // keyword of a one-page document).
        #expect(lines.allSatisfy { !$0.contains(" (1)") }, "\(lines)")
        let twice = try #require(lines.first { $0.hasPrefix("twice  ") })
        #expect(twice.contains(" (2)") || twice.contains(" (3)"), "\(twice)")
        let cjkKeywords = try #require(lines[0].components(separatedBy: "pages read): ").last)
        #expect(!cjkKeywords.contains(" ("), "a one-page document's keywords are bare: \(lines[0])")

        let table = try keywordTable()
        let chinese = (table[store.cjk] ?? []).map(\.0).filter { $0.unicodeScalars.contains(where: Scripts.isHan) }
        for expected in ["圣人", "无为", "子贡"] { #expect(chinese.contains(expected), "\(chinese)") }
        #expect(chinese.allSatisfy { $0.count >= 2 }, "\(chinese)")
        for english in [store.clean0, store.clean1] {
            let words = (table[english] ?? []).map { $0.0.lowercased() }
            #expect(words.count > 10 && words.count <= Keywords.limit, "\(words)")
            for stop in ["the", "of", "and", "to", "a", "is", "this", "or"] { #expect(!words.contains(stop), "\(stop)") }
        }
    }

    @Test("keywords: ranked by the number of pages they are on (two copies of a page and another page)")
    func keywordFrequency() throws {
        let store = try store()
        let table = try keywordTable()
        // The copies read alone, as documents of their own, give each page's keywords.
        let first = Set((table[store.clean1] ?? []).map { $0.0.lowercased() })
        let second = Set((table[store.clean0] ?? []).map { $0.0.lowercased() })
        let twice = try #require(table["twice"])
        #expect(twice.count == first.union(second).count, "every keyword of the pages, once")
        for (keyword, pages) in twice {
            let key = keyword.lowercased()
            let expected = (first.contains(key) ? 2 : 0) + (second.contains(key) ? 1 : 0)
            #expect(pages == expected, "\(keyword): \(pages) pages, expected \(expected)")
        }
        #expect(twice.map(\.1) == twice.map(\.1).sorted(by: >), "most pages first")
        #expect(twice.first?.1 == 3, "a keyword of both pages leads: \(twice.prefix(5))")
        // Within one count, first appearance: the copies of clean-001 come first, so its first keyword leads the 2s.
        let firstOfPage = try #require(table[store.clean1]?.first { !second.contains($0.0.lowercased()) }?.0)
        #expect(twice.first { $0.1 == 2 }?.0 == firstOfPage)
    }

    @Test("keywords --json keys, --limit, --document; a document with no pages read is listed without keywords")
    func keywordOptions() throws {
        let store = try store()
        let output = try keywords(["--json", "--limit", "3", "--document", "twice", "--document", "photo-000.jpg"])
        #expect(output.status == 0, "\(output.stderr)")
        let documents = try #require(try json(output)["documents"]?.arrayValue)
        #expect(documents.map { $0["document"]?.stringValue } == ["twice", store.unread])
        #expect(documents[0].objectValue?.map(\.0) == ["document", "document_id", "pages", "pages_done", "keywords"])
        #expect(documents[0]["pages"]?.intValue == 3 && documents[0]["pages_done"]?.intValue == 3)
        #expect(documents[0]["keywords"]?.arrayValue?.count == 3)
        #expect(documents[0]["keywords"]?[0]?.objectValue?.map(\.0) == ["keyword", "pages"])
        #expect(documents[1]["pages_done"]?.intValue == 0 && documents[1]["keywords"] == .array([]))
        let text = try keywords(["--document", "twice", "--limit", "2"])
        #expect(text.text.split(separator: "\n").count == 1 && text.text.hasPrefix("twice  (3/3 pages read): "))
        #expect(text.text.components(separatedBy: "), ").count == 3, "two keywords: \(text.text)")
        #expect(try keywords(["--document", "nothing"]).status == 66)
        #expect(try keywords(["stray"]).status == 64)
    }

    @Test("help for search and keywords, with examples")
    func help() throws {
        for command in ["search", "keywords"] {
            let help = try Run.ocrfarm(["help", command])
            #expect(help.status == 0 && help.text.contains("Examples:") && help.text.contains("--document NAME"))
            #expect(try Run.ocrfarm([command, "--help"]).text == help.text)
        }
        let overview = try Run.ocrfarm(["help"])
        #expect(overview.text.contains("  search ") && overview.text.contains("  keywords "))
    }
}
