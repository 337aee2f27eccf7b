import Testing
import FarmCore
import FarmRuntime
import FarmStore
import SQLite
import TestSupport

@Suite("Store: whose file, sound or damaged, nothing left behind")
struct StoreIntegrityTests {
    let folder = TemporaryDirectory("store-integrity")

    func addPages(_ store: Store, _ count: Int) throws {
        let pages = (0..<count).map { NewPage(source: RawPath("/data/p\($0).png"), index: 0, kind: .image) }
        _ = try store.add([NewDocument(name: "doc", source: RawPath("/data"), contentHash: "h", priority: 0,
                                       options: PageOptions(), pages: pages)])
    }

    @Test("another program's SQLite file is refused and left as it was")
    func foreignFile() throws {
        let path = folder.file("notes.db")
        do {
            let other = try Connection(path: path)
            try other.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('x')")
        }
        #expect {
            _ = try Store(path: path)
        } throws: { error in
            "\(error)".contains("not an ocrfarm store") && "\(error)".contains("notes")
        }
        #expect(try Connection(path: path).tableNames() == ["notes"], "no ocrfarm table was added")
        #expect(throws: StoreError.self) { _ = try Store(path: path, readOnly: true) }

        let marked = folder.file("marked.db")
        try Connection(path: marked).setApplicationID(0x1234_5678)
        #expect {
            _ = try Store(path: marked)
        } throws: { error in
            "\(error)".contains("another program's SQLite database (application_id 0x12345678)")
        }
    }

    @Test("a store carries ocrfarm's application id; a store made before it is known by its tables and marked")
    func applicationID() throws {
        let path = folder.file("farm.db")
        try addPages(try Store(path: path), 2)
        #expect(try Connection(path: path).applicationID == Store.applicationID)
        try Connection(path: path).setApplicationID(0)   // as stores made before this change
        let reopened = try Store(path: path)
        #expect(try reopened.status().totalPages == 2)
        #expect(try Connection(path: path).applicationID == Store.applicationID)
    }

    @Test("a write-ahead log without its store is refused, and the log is left alone")
    func walWithoutStore() throws {
        let path = folder.file("farm.db")
        let wal = folder.write("farm.db-wal", [UInt8](repeating: 7, count: 4096))
        for readOnly in [false, true] {
            #expect {
                _ = try Store(path: path, readOnly: readOnly)
            } throws: { error in
                "\(error)".contains("is missing but its write-ahead log") && "\(error)".contains("moved or deleted while in use")
            }
        }
        #expect(!FileSystem.exists(path), "no new empty store was made")
        #expect(try FileSystem.read(wal) == [UInt8](repeating: 7, count: 4096))
    }

    @Test("quick_check finds a damaged store, and the error says so by kind")
    func damaged() throws {
        let path = folder.file("farm.db")
        do { try addPages(try Store(path: path), 200) }
        try Store(path: path).checkSound()
        // Overwrite the middle of the file (table and index pages), keeping the header: SQLite still opens it.
        var bytes = try FileSystem.read(path)
        let pageSize = 4096
        try #require(bytes.count >= 6 * pageSize, "\(bytes.count) bytes")
        for index in (2 * pageSize)..<(bytes.count - pageSize) where index % 7 == 0 { bytes[index] = 0xA5 }
        try FileSystem.write(bytes, to: path)
        #expect {
            let store = try Store(path: path, readOnly: true)
            try store.checkSound()
        } throws: { error in
            (error as? StoreError)?.isDamaged == true && "\(error)".contains("is damaged")
        }
    }
}
