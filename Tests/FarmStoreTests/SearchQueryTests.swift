import Testing
import FarmCore
import FarmStore
import SQLite
import TestSupport

@Suite("Search text: Han and kana as single-character tokens")
struct SearchTextTests {
    @Test("Han and kana characters are separated from everything next to them; spaces and Latin words stay as they are")
    func spacing() {
        let z = "\u{200B}"
        #expect(SearchText.indexed("历史") == "历\(z)史")
        #expect(SearchText.indexed("论语 Analects") == "论\(z)语 Analects")
        #expect(SearchText.indexed("AI历史2023年") == "AI\(z)历\(z)史\(z)2023\(z)年")
        #expect(SearchText.indexed("カタカナとひらがな") == "カ\(z)タ\(z)カ\(z)ナ\(z)と\(z)ひ\(z)ら\(z)が\(z)な")
        #expect(SearchText.indexed("plain English, no change.") == "plain English, no change.")
        #expect(SearchText.indexed("君子。\n小人") == "君\(z)子\(z)。\n小\(z)人")
        // A combining mark stays with its character (a decomposed が).
        #expect(SearchText.indexed("か\u{3099}き") == "か\u{3099}\(z)き")
    }

    @Test("removing the separators gives back exactly the stored text", arguments: [
        "论语述而 The Analects\n子贡问日：“有一言而可以终身行之者乎？”", "mixed 中文and English 混合 text", "", "   ", "日本語のテキスト",
    ])
    func roundTrip(text: String) {
        #expect(SearchText.displayed(SearchText.indexed(text)) == text)
        #expect(SearchText.indexed(SearchText.indexed(text)) == SearchText.indexed(text), "spacing twice adds nothing")
    }
}

@Suite("Search query parser")
struct SearchQueryTests {
    func match(_ text: String) throws -> String { try SearchQuery(text).match }

    func reason(_ text: String) -> String? {
        do {
            _ = try SearchQuery(text)
            return nil
        } catch {
            return error.reason
        }
    }

    @Test("words, phrases and prefixes become quoted FTS5 terms; operators are explicit and parenthesized")
    func rendering() throws {
        #expect(try match("invoice") == "\"invoice\"")
        #expect(try match("net amount") == "(\"net\" AND \"amount\")")
        #expect(try match("\"net amount\"") == "\"net amount\"")
        #expect(try match("digit*") == "\"digit\"*")
        #expect(try match("\"net am\"*") == "\"net am\"*")
        #expect(try match("a1 OR b2") == "(\"a1\" OR \"b2\")")
        #expect(try match("a1 AND b2") == "(\"a1\" AND \"b2\")")
        #expect(try match("a1 NOT b2") == "(\"a1\" NOT \"b2\")")
        #expect(try match("(a1 OR b2) c3") == "((\"a1\" OR \"b2\") AND \"c3\")")
        // Lower-case operators are words.
        #expect(try match("cats and dogs") == "(\"cats\" AND \"and\" AND \"dogs\")")
        // A quoted operator is a word too.
        #expect(try match("\"NOT\"") == "\"NOT\"")
    }

    @Test("precedence as in FTS5: NOT, then AND, then OR")
    func precedence() throws {
        let query = try SearchQuery("a1 b2 OR c3 NOT d4 e5")
        #expect(query.expression == .or([
            .and([.text("a1", phrase: false, prefix: false), .text("b2", phrase: false, prefix: false)]),
            .and([.not(.text("c3", phrase: false, prefix: false), .text("d4", phrase: false, prefix: false)),
                  .text("e5", phrase: false, prefix: false)]),
        ]))
        #expect(query.terms == ["a1", "b2", "c3", "d4", "e5"])
        #expect(try match("a1 NOT b2 NOT c3") == "((\"a1\" NOT \"b2\") NOT \"c3\")")
    }

    @Test("a - before a word, phrase or group leaves pages out, as NOT does; inside a word it is text (issue 36)")
    func exclusion() throws {
        #expect(try match("fox -dog") == "(\"fox\" NOT \"dog\")")
        #expect(try match("fox -\"lazy dog\" cat") == "((\"fox\" NOT \"lazy dog\") AND \"cat\")")
        #expect(try match("fox -(dog OR cat)") == "(\"fox\" NOT (\"dog\" OR \"cat\"))")
        #expect(try match("(fox -dog)") == "(\"fox\" NOT \"dog\")")
        #expect(try match("e-mail -spam") == "(\"e-mail\" NOT \"spam\")")
        #expect(reason("-dog")?.contains("put a word to find before it") == true, "\(reason("-dog") ?? "accepted")")
        #expect(reason("fox OR -dog")?.contains("OR cannot be followed by -") == true)
        #expect(reason("fox -)")?.contains("- needs a word after it") == true, "\(reason("fox -)") ?? "accepted")")
    }

    @Test("the name expression folds Greek accents; the page expression keeps them")
    func greekFolding() throws {
        #expect(try SearchQuery("Αθήνα").nameMatch == "\"Αθηνα\"")
        #expect(try SearchQuery("Αθήνα").match == "\"Αθήνα\"")
        #expect(SearchText.folded("Ἀθῆναι ᾠδή ΐ Ϋ") == "Αθηναι ωδη ι Υ")
        #expect(SearchText.folded("Müller 君子") == "Müller 君子", "only Greek")
    }

    @Test("Chinese runs become phrases of single characters, in words, phrases and prefixes")
    func chinese() throws {
        let z = "\u{200B}"
        #expect(try match("历史") == "\"历\(z)史\"")
        #expect(try match("君子 OR 论语") == "(\"君\(z)子\" OR \"论\(z)语\")")
        #expect(try match("\"AI历史\"") == "\"AI\(z)历\(z)史\"")
        #expect(try match("历*") == "\"历\"*")
        #expect(try SearchQuery("历史").isSingleToken == false)
        #expect(try SearchQuery("invoice").isSingleToken == true)
        #expect(try SearchQuery("e-mail").isSingleToken == false)
    }

    @Test("FTS5 syntax typed by a user is searched as text, never interpreted")
    func specialCharacters() throws {
        #expect(try match("body:secret") == "\"body:secret\"")
        #expect(try match("NEAR(a1 b2)") == "(\"NEAR\" AND (\"a1\" AND \"b2\"))")
        #expect(try match("^start +plus") == "(\"^start\" AND \"+plus\")")
        #expect(try match("{col} x'1'") == "(\"{col}\" AND \"x'1'\")")
    }

    @Test("malformed queries say what is wrong", arguments: [
        ("", "the query is empty"),
        ("   ", "the query is empty"),
        ("\"open phrase", "unbalanced quote"),
        ("a1 \"b2", "unbalanced quote"),
        ("\"\"", "empty phrase"),
        ("AND", "AND needs a word before it"),
        ("OR b2", "OR needs a word before it"),
        ("NOT b2", "NOT needs a word before it"),
        ("a1 AND", "AND needs a word after it"),
        ("a1 OR", "OR needs a word after it"),
        ("a1 NOT", "NOT needs a word after it"),
        ("a1 AND OR b2", "AND cannot be followed by OR"),
        ("a1 OR ) b2", "OR needs a word after it, not ')'"),
        ("(a1 b2", "unbalanced parenthesis: '(' without ')'"),
        ("a1 b2)", "unbalanced parenthesis: ')' without '('"),
        (")", "unbalanced parenthesis: ')' without '('"),
        ("()", "empty parentheses"),
        ("*", "a lone *"),
        ("a*b", "* marks a prefix and goes only at the end"),
        ("*abc", "* marks a prefix and goes only at the end"),
        ("a*", "a* is too short a prefix"),
        ("\"net a\"*", "a* is too short a prefix"),
        ("...", "'...' has no letters or digits"),
        ("\"!?\"", "\"!?\" has no letters or digits"),
    ])
    func malformed(query: String, expected: String) {
        let reason = reason(query)
        #expect(reason?.contains(expected) == true, "\(query): \(reason ?? "accepted")")
    }

    @Test("limits: nesting depth and number of terms")
    func limits() {
        let deep = String(repeating: "(", count: 17) + "a1" + String(repeating: ")", count: 17)
        #expect(reason(deep)?.contains("nested too deeply") == true)
        #expect(reason(String(repeating: "(", count: 16) + "a1" + String(repeating: ")", count: 16)) == nil)
        let many = (1...65).map { "w\($0)" }.joined(separator: " OR ")
        #expect(reason(many)?.contains("too many words") == true)
    }

    @Test("every query the parser accepts runs in FTS5 without an error (random queries from tricky pieces)")
    func acceptedQueriesRun() throws {
        let folder = TemporaryDirectory("search-fuzz")
        let store = try Store(path: folder.file("farm.db"))
        let pieces = ["word", "历史", "\"", "(", ")", "AND", "OR", "NOT", "*", "pre*", "\"a phrase\"", ":", "^", "+", "-",
                      "NEAR", "body:", "'", "{", "}", ",", "x\"y", "日本*", "é", "''", "\\", "%", "_", "NEAR(", "\"ab\"*",
                      "ab\"*", "*\""]
        var generator = SystemRandomNumberGenerator()
        var accepted = 0
        for _ in 0..<3000 {
            let count = Int.random(in: 1...6, using: &generator)
            let text = (0..<count).map { _ in pieces.randomElement(using: &generator)! }
                .joined(separator: Bool.random(using: &generator) ? " " : "")
            guard let query = try? SearchQuery(text) else { continue }
            accepted += 1
            do {
                _ = try store.search(query, limit: 5)
            } catch {
                Issue.record("accepted query \(text) (\(query.match)) failed in FTS5: \(error)")
            }
        }
        #expect(accepted > 300, "too few accepted queries to mean anything: \(accepted)")
    }
}
