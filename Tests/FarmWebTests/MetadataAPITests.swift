import Testing
import FarmCore
import FarmStore
import TestSupport
import Foundation

@Suite("ocrfarm serve: document metadata, set by admins, searched by web and CLI (issue 36)", .serialized)
struct MetadataAPITests {
    @Test("POST /api/metadata: admin only; values checked with clear errors; answered by the pages list; web and CLI search find it")
    func metadata() throws {
        let folder = TemporaryDirectory("metadata-api")
        let path = folder.file("farm.db")
        let samples = Fixtures.packageRoot + "/Samples/pages/"
        let submit = try Run.ocrfarm(["submit", "--store", path, samples + "clean-000.png"])
        #expect(submit.status == 0, "\(submit.stderr)")
        let read = try makeToken(path, "read")
        let admin = try makeToken(path, "admin")
        let served = try Served(store: path, log: folder.file("serve.log"))
        let id = try #require(try Store(path: path, readOnly: true).documentSummaries(after: nil, limit: 1).first?.document.id.rawValue)

        let body = #"{"document": \#(id), "title": "  Letter to Bessel ", "date": "1829-05-14", "creator": "Gauß", "shelfmark": "Cod. Ms. 17"}"#
        #expect(try served.json("/api/metadata", token: nil, body).status == 401)
        #expect(try served.json("/api/metadata", token: read, body).status == 403)
        #expect(try Store(path: path, readOnly: true).metadata(of: DocumentID(id)) == DocumentMetadata(), "refused: nothing written")

        let set = try served.json("/api/metadata", token: admin, body)
        #expect(set.status == 200, "\(set.body)")
        #expect(set.json?["metadata"]?["title"]?.stringValue == "Letter to Bessel", "trimmed: \(set.body)")
        #expect(set.json?["metadata"]?["identifier"]?.stringValue == "", "a field not given stays unset")
        // A field not given keeps its value.
        let more = try served.json("/api/metadata", token: admin, #"{"document": \#(id), "identifier": "urn:nbn:de:4711"}"#)
        #expect(more.status == 200 && more.json?["metadata"]?["creator"]?.stringValue == "Gauß", "\(more.body)")
        let expected = DocumentMetadata(title: "Letter to Bessel", date: "1829-05-14", creator: "Gauß", identifier: "urn:nbn:de:4711",
                                        shelfmark: "Cod. Ms. 17")
        #expect(try Store(path: path, readOnly: true).metadata(of: DocumentID(id)) == expected)

        let pages = try served.call("/api/documents/\(id)/pages", token: read)
        #expect(pages.json?["document"]?["metadata"]?["shelfmark"]?.stringValue == "Cod. Ms. 17", "\(pages.body)")

        // Refused, each naming the field and why; nothing changes.
        let refusals: [(String, String)] = [
            (#"{"document": \#(id), "date": "14 May 1829"}"#, "date '14 May 1829' is not a date: write YYYY, YYYY-MM or YYYY-MM-DD"),
            (#"{"document": \#(id), "date": "1829-02-30"}"#, "is not a date"),
            (#"{"document": \#(id), "creator": "a\nb"}"#, "creator holds U+000A"),
            (#"{"document": \#(id), "title": "\u202Efdp.exe"}"#, "title holds U+202E"),
            (#"{"document": \#(id), "shelfmark": "\#(String(repeating: "x", count: 101))"}"#, "shelfmark is 101 characters long; at most 100"),
            (#"{"document": \#(id), "author": "x"}"#, "no metadata field 'author'"),
            (#"{"document": \#(id), "title": 5}"#, "title must be a string"),
            (#"{"title": "x"}"#, "document (an id) is required"),
            ("not json", "the body must be a JSON object"),
        ]
        for (request, message) in refusals {
            let answer = try served.json("/api/metadata", token: admin, request)
            #expect(answer.status == 400 && answer.json?["error"]?.stringValue?.contains(message) == true, "\(request): \(answer.body)")
        }
        #expect(try served.json("/api/metadata", token: admin, #"{"document": 999, "title": "x"}"#).status == 404)
        #expect(try Store(path: path, readOnly: true).metadata(of: DocumentID(id)) == expected, "refusals changed nothing")

        // The web search and `ocrfarm search` find the document by its fields (no page is read yet: no page hits).
        for query in ["bessel", "Gauß", "4711", "\"Cod. Ms. 17\""] {
            let web = try served.call("/api/search?q=" + query.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!, token: read)
            #expect(web.json?["documents"]?[0]?["id"]?.intValue == Int(id), "\(query): \(web.body)")
            #expect(web.json?["documents"]?[0]?["metadata"]?["title"]?.stringValue == "Letter to Bessel")
            let cli = try Run.ocrfarm(["search", "--store", path, "--json", query])
            #expect(cli.status == 0 && (try? JSON.parse(Array(cli.text.utf8)))?["documents_named"]?[0]?["document_id"]?.intValue == Int(id),
                    "\(query): \(cli.text) \(cli.stderr)")
        }
        #expect(try served.call("/api/search?q=humboldt", token: read).json?["documents"]?.arrayValue?.isEmpty == true)
    }
}
