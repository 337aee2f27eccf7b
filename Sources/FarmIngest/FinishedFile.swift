import Crypto
import FarmCore
import FarmRuntime
import FarmStore

/// A finished file of a watched folder moved to the done folder (`watch --done-to`), with the store following it
/// (issue 36): its pages' source paths name the file where it now is, so the viewer, IIIF and `export` (which
/// overlays a PDF's text on the file itself) keep finding it. The hash and size recorded at submit stay, and
/// everything that reads the file checks them, as before.
public enum FinishedFile {
    /// What became of the store's record of a moved file.
    public enum Outcome: Sendable, Equatable {
        /// The file was the one submitted: moved, and `pages` pages now name it there.
        case followed(pages: Int)
        /// The file's content is not what was submitted (it changed since, or a link stands where it was): moved
        /// as asked, and the store keeps its old path, since the file there is not the page's source.
        case changed(reason: String)
        /// No page of the document names the file: moved, nothing to follow.
        case unrecorded
        /// Not moved: the file of that name in the done folder is another document's source, which a move would
        /// replace (a second file of the same name finished later).
        case kept(reason: String)
    }

    /// Moves `relative` below `root` to the same path below `target` (`WatchFolder.move`) and records the move for
    /// `document` in `store` when the file is still the one submitted (a regular file, not through a link, of the
    /// recorded size and SHA-256). If the store cannot record it, the file is moved back and the error thrown, so
    /// file and store never disagree.
    public static func move(_ relative: [UInt8], from root: RawPath, to target: RawPath, document: DocumentID,
                            store: Store) throws -> Outcome {
        let old = root.appending(relative), new = target.appending(relative)
        if FileSystem.exists(new.description) {
            let others = try store.documents(readingFrom: new, except: document)
            if let other = others.first {
                return .kept(reason: "\(new) is the file of document \(other.rawValue), which a move would replace")
            }
        }
        let recorded = try store.recordedContent(of: document, path: old)
        var outcome = Outcome.unrecorded
        if let recorded {
            outcome = .followed(pages: 0)
            let hasher = SHA256.Hasher()
            do throws(FileError) {
                let scan = try FileSystem.read(old, regularOnly: true, followLinks: false, keepingAll: { _ in false },
                                               along: hasher.update)
                let hash = SHA256.hex(digest: hasher.finish())
                if let size = recorded.size, size != scan.size {
                    outcome = .changed(reason: "\(scan.size) bytes now, \(size) when submitted")
                } else if let expected = recorded.hash, expected != hash {
                    outcome = .changed(reason: "its SHA-256 is not the one recorded at submit")
                }
            } catch {
                outcome = .changed(reason: "it cannot be read as a regular file: \(error.reason)")
            }
        }
        try WatchFolder.move(relative, from: root, to: target)
        guard case .followed = outcome else { return outcome }
        do {
            return .followed(pages: try store.recordMove(of: document, from: old, to: new))
        } catch {
            // The store keeps the old path: put the file back there.
            try? WatchFolder.move(relative, from: target, to: root)
            throw error
        }
    }
}
