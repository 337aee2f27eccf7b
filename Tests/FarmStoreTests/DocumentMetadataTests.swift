import Testing
import FarmCore
@testable import FarmStore
import SQLite
import TestSupport

@Suite("Store: document metadata (issue 36)")
struct DocumentMetadataTests {
    let folder = TemporaryDirectory("document-metadata")

    func add(_ store: Store, name: String) throws -> DocumentID {
        try store.add([NewDocument(name: name, source: RawPath("/data/\(name)"), contentHash: nil, priority: 0, options: PageOptions(),
                                   pages: [NewPage(source: RawPath("/data/\(name)/0.png"), index: 0, kind: .image)])])[0]
    }

    func named(_ query: String, in store: Store) throws -> [String] {
        try store.documents(matchingName: try SearchQuery(query), limit: 10).map(\.name)
    }

    @Test("stored trimmed, read back, kept across reopening, searched with the name, replaced, cleared, deleted with the document")
    func storedAndSearched() throws {
        let path = folder.file("farm.db")
        let store = try Store(path: path)
        let letter = try add(store, name: "scan-0001.tif")
        let other = try add(store, name: "scan-0002.tif")
        #expect(try store.metadata(of: letter) == DocumentMetadata(), "none set: all empty")
        #expect(try named("Humboldt", in: store).isEmpty)

        let set = DocumentMetadata(title: "  Brief an Alexander von Humboldt ", date: "1829-05-14", creator: "Carl Friedrich Gauß",
                                   identifier: "urn:nbn:de:0001-4711", shelfmark: "Cod. Ms. Gauß Briefe A: Humboldt 12")
        let stored = try #require(try store.setMetadata(set, of: letter))
        #expect(stored.title == "Brief an Alexander von Humboldt", "spaces at either end removed")
        #expect(try Store(path: path, readOnly: true).metadata(of: letter) == stored, "read back from the file")
        #expect(try store.metadata(of: other) == DocumentMetadata())

        // Found by any field's words, accents folded as for names; the other document is not.
        #expect(try named("humboldt", in: store) == ["scan-0001.tif"])
        #expect(try named("Gauß", in: store) == ["scan-0001.tif"])
        #expect(try named("\"Ms. Gauß\"", in: store) == ["scan-0001.tif"], "shelfmark as a phrase")
        #expect(try named("4711", in: store) == ["scan-0001.tif"], "identifier")
        #expect(try named("1829", in: store) == ["scan-0001.tif"], "date")
        #expect(try named("scan", in: store).sorted() == ["scan-0001.tif", "scan-0002.tif"], "the name is still indexed")

        // Replaced: the old words are no longer found.
        try store.setMetadata(DocumentMetadata(title: "Brief an Bessel"), of: letter)
        #expect(try named("humboldt", in: store).isEmpty)
        #expect(try named("bessel", in: store) == ["scan-0001.tif"])
        #expect(try store.metadata(of: letter) == DocumentMetadata(title: "Brief an Bessel"))

        // Cleared: no row left.
        try store.setMetadata(DocumentMetadata(), of: letter)
        #expect(try store.connection.cached("SELECT count(*) FROM document_metadata").first([]) { $0.int(0) } == 0)
        #expect(try named("bessel", in: store).isEmpty)

        // Deleted with its document.
        try store.setMetadata(DocumentMetadata(shelfmark: "Hs 1"), of: other)
        _ = try store.delete([other], dryRun: false)
        #expect(try store.connection.cached("SELECT count(*) FROM document_metadata").first([]) { $0.int(0) } == 0)
        #expect(try store.setMetadata(DocumentMetadata(title: "x"), of: other) == nil, "no such document")
    }

    @Test("a bad value is refused naming the field, and nothing is written")
    func refused() throws {
        let store = try Store(path: folder.file("refused.db"))
        let document = try add(store, name: "a.tif")
        try store.setMetadata(DocumentMetadata(title: "Kept"), of: document)
        let cases: [(DocumentMetadata, DocumentMetadata.Field, String)] = [
            (DocumentMetadata(title: "New", date: "14 May 1829"), .date, "not a date"),
            (DocumentMetadata(date: "1829-02-30"), .date, "not a date"),
            (DocumentMetadata(date: "1829-13"), .date, "not a date"),
            (DocumentMetadata(creator: "a\nb"), .creator, "U+000A"),
            (DocumentMetadata(identifier: "abc\u{202E}fdp.exe"), .identifier, "U+202E"),
            (DocumentMetadata(shelfmark: String(repeating: "x", count: 101)), .shelfmark, "at most 100"),
            (DocumentMetadata(title: String(repeating: "é", count: 501)), .title, "501 characters"),
        ]
        for (metadata, field, reason) in cases {
            #expect {
                try store.setMetadata(metadata, of: document)
            } throws: { error in
                guard let error = error as? MetadataError else { return false }
                return error.field == field && error.description.contains(reason)
            }
        }
        #expect(try store.metadata(of: document) == DocumentMetadata(title: "Kept"))
        for date in ["1829", "1829-05", "2024-02-29", ""] {
            #expect(try store.setMetadata(DocumentMetadata(date: date), of: document)?.date == date)
        }
    }
}
