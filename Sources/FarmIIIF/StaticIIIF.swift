import FarmCore
import FarmRuntime
import FarmStore
import Leptonica

/// `ocrfarm export --iiif DIR`: the IIIF tree as static files for a plain web server that publishes DIR at the
/// base URL. Image API level 0: each page image as JPEG at the sizes its info.json lists (the whole image, then
/// halved down to one tile's size), no tiles and no other regions; no Content Search (it needs the server).
///
///     DIR/{document id}/manifest.json
///     DIR/{document id}/annotations/{page id}.json
///     DIR/image/{page id}/info.json
///     DIR/image/{page id}/full/max/0/default.jpg          the whole image, and the same at each listed size as
///     DIR/image/{page id}/full/{w},{h}/0/default.jpg      (the canonical form of a size in Image API 3.0)
public struct StaticIIIF {
    public struct Summary: Sendable, Equatable {
        public var documents = 0
        public var canvases = 0
        public var files = 0
        public var warnings = 0
    }

    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    let store: Store
    let links: IIIFLinks

    public init(store: Store, base: String) {
        self.store = store
        links = IIIFLinks(base: base, isStatic: true)
    }

    /// Writes the tree of `documents` (all when nil) into `folder`; a page whose image cannot be made is left out of
    /// its manifest, with a warning.
    public func write(_ documents: [DocumentRecord]?, into folder: String, warn: (String) -> Void) throws -> Summary {
        var summary = Summary()
        var chosen = documents ?? []
        if documents == nil {
            var last: DocumentID?
            while true {
                let batch = try store.documents(after: last, limit: 500)
                guard let end = batch.last else { break }
                chosen += batch
                last = end.id
            }
        }
        for record in chosen {
            guard let document = try store.iiifDocument(record.id) else { continue }
            var canvases: [(page: CanvasPage, width: Int, height: Int)] = []
            for canvas in try store.iiifCanvases(of: record.id) {
                do {
                    summary.files += try writeImage(canvas.page.id, into: folder)
                } catch {
                    warn("\(record.name) page \(canvas.page.number): left out of the IIIF manifest: \(error)")
                    summary.warnings += 1
                    continue
                }
                if canvas.page.state == .done, let text = try store.canvasText(of: canvas.page.id) {
                    let json = Presentation.annotationPage(text, page: canvas.page.id, document: record.id, links: links)
                    try save(json.bytes, "\(record.id)/annotations/\(canvas.page.id).json", in: folder)
                    summary.files += 1
                }
                canvases.append(canvas)
            }
            let manifest = Presentation.manifest(document, canvases: canvases, links: links)
            try save(manifest.bytes, "\(record.id)/manifest.json", in: folder)
            summary.files += 1
            summary.documents += 1
            summary.canvases += canvases.count
        }
        return summary
    }

    /// The page's info.json and its JPEGs; how many files.
    func writeImage(_ page: PageID, into folder: String) throws -> Int {
        guard let source = try store.source(of: page) else { throw Failure(message: "the store has no source for it") }
        let image: Pix
        let readSize = source.kind == .pdf ? try store.readSize(of: page) : nil
        do { image = try PageImages.decoded(source, readSize: readSize) } catch { throw Failure(message: error.reason) }
        let service = links.imageService(page)
        let factors = ImageInfo.scaleFactors(width: image.width, height: image.height)
        let sizes = factors.map { ((image.width + $0 - 1) / $0, (image.height + $0 - 1) / $0) }
        let info = ImageInfo.json(id: service, width: image.width, height: image.height, staticSizes: sizes)
        try save(info.bytes, "image/\(page)/info.json", in: folder)
        var files = 1
        for (index, (w, h)) in sizes.enumerated() {
            let request: ImageRequest
            let bytes: [UInt8]
            do {
                request = try ImageRequest(region: "full", size: "\(w),\(h)", rotation: "0", qualityAndFormat: "default.jpg",
                                           imageWidth: image.width, imageHeight: image.height)
                bytes = try PageImages.rendered(request, from: image)
            } catch {
                throw Failure(message: "its image cannot be made at \(w)x\(h): \(error)")
            }
            try save(bytes, "image/\(page)/full/\(w),\(h)/0/default.jpg", in: folder)
            files += 1
            if index == 0 {
                try save(bytes, "image/\(page)/full/max/0/default.jpg", in: folder)
                files += 1
            }
        }
        return files
    }

    func save(_ bytes: [UInt8], _ relative: String, in folder: String) throws {
        let path = folder + "/" + relative
        do {
            try FileSystem.makeDirectory(FileSystem.directoryName(path))
            try FileSystem.write(bytes, to: path)
        } catch {
            throw Failure(message: "cannot write \(path): \(error.reason)")
        }
    }
}
