import Testing
import FarmAnalysis

@Suite("Keywords")
struct KeywordsTests {
    @Test("English: stop words, numbers, single letters and punctuation dropped; first spelling kept once; most said first")
    func english() {
        let text = """
            The Licensor grants you a license to use the Software in 2024, and the license is free.
            See section 3 (b) of THE LICENSE: software x is provided "as is"; Software!
            """
        let keywords = Keywords.extract(from: text, languages: ["eng"])
        // license and Software three times each, the rest once, in the order they come.
        #expect(keywords == ["license", "Software", "Licensor", "grants", "use", "free", "section", "provided"])
    }

    @Test("every kept English word is a word of the text and no stop word; none of one character")
    func englishProperties() {
        let text = "It is what it is: a farm of 2 workers that read the pages, one by one, and they don't stop."
        let keywords = Keywords.extract(from: text, languages: ["eng"])
        let stopWords = StopWords.words(for: ["eng"])
        #expect(keywords == ["farm", "workers", "read", "pages", "stop"])
        #expect(keywords.allSatisfy { !stopWords.contains($0.lowercased()) && $0.count > 1 })
        // The typographic apostrophe is a stop word too.
        #expect(Keywords.extract(from: "they don’t stop", languages: ["eng"]) == ["stop"])
    }

    @Test("Chinese: multi-character dictionary words, no stop words, no single characters, no punctuation")
    func chinese() {
        let text = "我们的图书馆有很多历史档案。这个图书馆在城市中心，我们每天都去。"
        let keywords = Keywords.extract(from: text, languages: ["chi_sim"])
        for expected in ["图书", "历史", "档案", "城市", "中心"] {
            #expect(keywords.contains(expected), "\(expected) missing from \(keywords)")
        }
        let stopWords = StopWords.words(for: ["chi_sim"])
        #expect(!keywords.contains { stopWords.contains($0) }, "\(keywords)")
        #expect(!keywords.contains("我们") && !keywords.contains("这个") && !keywords.contains("很多"))
        #expect(keywords.allSatisfy { $0.count > 1 }, "\(keywords)")
        #expect(keywords.filter { $0 == "图书" }.count == 1)
        #expect(keywords.first == "图书")
    }

    @Test("a mixed page loses the stop words of each of its languages")
    func mixed() {
        let keywords = Keywords.extract(from: "我们的历史 the history of the farm", languages: ["chi_sim", "eng"])
        #expect(keywords == ["历史", "history", "farm"])
        // Without English among the languages, English function words stay.
        #expect(Keywords.extract(from: "the history", languages: ["chi_sim"]) == ["the", "history"])
    }

    @Test("German, French and Spanish lists; case-insensitive de-duplication keeps the first spelling")
    func otherLanguages() {
        #expect(Keywords.extract(from: "Das Haus und das haus der Stadt", languages: ["deu"]) == ["Haus", "Stadt"])
        #expect(Keywords.extract(from: "La maison est dans la ville", languages: ["fra"]) == ["maison", "ville"])
        #expect(Keywords.extract(from: "El libro de la biblioteca", languages: ["spa"]) == ["libro", "biblioteca"])
        #expect(Keywords.extract(from: "", languages: ["eng"]).isEmpty)
        #expect(StopWords.words(for: ["chi_tra"]).contains("我們"))
        #expect(StopWords.words(for: ["chi_sim_vert"]) == StopWords.words(for: ["chi_sim"]))
        #expect(StopWords.words(for: ["eng"]).count >= 150)
    }
}

@Suite("Keywords worth reading")
struct RankedKeywordsTests {
    @Test("ranked by how often the page says them; OCR debris out; at most 20")
    func ranked() {
        let text = """
            The archive keeps letters. Letters from the archive of the town: letters and maps, ee tHeDitFer l0ve eee.
            """ + String(repeating: " alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform", count: 1)
        let keywords = Keywords.extract(from: text, languages: ["eng"])
        #expect(keywords.prefix(2) == ["letters", "archive"], "\(keywords)")
        for debris in ["ee", "tHeDitFer", "l0ve", "eee"] { #expect(!keywords.contains(debris), "\(debris) in \(keywords)") }
        #expect(keywords.count == Keywords.limit)
    }

    @Test("names, dates and measures are kept whole and rank before plain words said as often")
    func namedThings() {
        let text = "Files are covered by the Boost Software License. Shipped on 12 March 1998 and 1998-03-12, 25 kg in all."
        let keywords = Keywords.extract(from: text, languages: ["eng"])
        for named in ["Boost Software License", "12 March 1998", "25 kg"] {
            #expect(keywords.contains(named), "\(named) missing from \(keywords)")
        }
        #expect(keywords.firstIndex(of: "Boost Software License")! < keywords.firstIndex(of: "covered")!, "\(keywords)")
    }

    @Test("a word the reader was unsure of is left out")
    func confidence() {
        let keywords = Keywords.extract(from: "Ditferonnal equations", languages: ["eng"], confidence: ["ditferonnal": 31, "equations": 92])
        #expect(keywords == ["equations"])
    }
}
