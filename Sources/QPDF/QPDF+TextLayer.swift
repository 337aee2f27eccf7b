import CQPDF
#if canImport(Glibc)
import Glibc
#endif

/// A PDF object to add to a document. References to the other added objects are written `@n` (n: the object's
/// index in the list, which must come earlier), e.g. `<< /Type /Font /DescendantFonts [@1] >>`.
public struct AddedObject: Sendable {
    /// The object's dictionary, in PDF syntax (a stream's dictionary without /Length or /Filter).
    public let dictionary: String
    /// The stream's data, uncompressed (compressed on adding); nil for a plain dictionary.
    public let stream: [UInt8]?

    public init(dictionary: String, stream: [UInt8]? = nil) {
        self.dictionary = dictionary
        self.stream = stream
    }
}

/// Invisible text to lay over one page of a PDF.
public struct PageTextLayer: Sendable {
    /// The page, from 0.
    public let page: Int
    /// The size of the space `content` draws in: the page as it is shown (its crop box, turned by /Rotate),
    /// in units of the caller's choosing (e.g. the pixels of the page's rendering), y up from the lower left.
    public let width: Double
    public let height: Double
    /// The content stream's operators (without q/Q around them).
    public let content: [UInt8]
    /// Degrees (0, 90, 180, 270) the page is turned clockwise, added to its /Rotate, so that it shows upright
    /// (`width` and `height` stay the page as shown before the turn; the text lies on the words either way).
    public let turn: Int

    public init(page: Int, width: Double, height: Double, content: [UInt8], turn: Int = 0) {
        self.page = page
        self.width = width
        self.height = height
        self.content = content
        self.turn = turn
    }
}

/// What a page of a PDF is, for rendering it: its visible box and whether it can show text at all.
public struct PDFPageFacts: Sendable, Equatable {
    /// The visible box (the crop box within the media box), in points, before /Rotate.
    public let width: Double
    public let height: Double
    /// /Rotate, 0, 90, 180 or 270.
    public let rotation: Int
    /// Whether the page or a form it draws has a font: without one it has no text.
    public let hasFonts: Bool
}

extension QPDF {
    /// Facts about page `page` (from 0) of a PDF in memory, read in this process (no poppler run).
    public static func pageFacts(_ pdf: [UInt8], name: String, page: Int) throws(QPDFError) -> PDFPageFacts {
        try withHandle { handle, log throws(QPDFError) in
            try read(pdf, into: handle, log: log, name: name)
            guard (0..<Int(qpdf_get_num_pages(handle))).contains(page) else {
                throw QPDFError(operation: "read \(name)", message: "no page \(page + 1)")
            }
            qpdf_push_inherited_attributes_to_page(handle)
            let object = qpdf_get_page_n(handle, page)
            let box = visibleBox(handle, object)
            return PDFPageFacts(width: box.2 - box.0, height: box.3 - box.1, rotation: rotation(handle, object),
                                hasFonts: hasFonts(handle, qpdf_oh_get_key(handle, object, "/Resources"), depth: 0))
        }
    }

    /// Whether `resources` (or those of a form XObject in them, a few levels down) name a font.
    private static func hasFonts(_ handle: qpdf_data?, _ resources: qpdf_oh, depth: Int) -> Bool {
        guard qpdf_oh_is_dictionary(handle, resources) != 0 else { return false }
        let fonts = qpdf_oh_get_key(handle, resources, "/Font")
        if qpdf_oh_is_dictionary(handle, fonts) != 0 {
            qpdf_oh_begin_dict_key_iter(handle, fonts)
            if qpdf_oh_dict_more_keys(handle) != 0 { return true }
        }
        let objects = qpdf_oh_get_key(handle, resources, "/XObject")
        guard qpdf_oh_is_dictionary(handle, objects) != 0 else { return false }
        var keys: [String] = []
        qpdf_oh_begin_dict_key_iter(handle, objects)
        while qpdf_oh_dict_more_keys(handle) != 0, let key = qpdf_oh_dict_next_key(handle) { keys.append(String(cString: key)) }
        for key in keys {
            let form = qpdf_oh_get_key(handle, objects, key)
            guard qpdf_oh_is_stream(handle, form) != 0 else { continue }
            let dictionary = qpdf_oh_get_dict(handle, form)
            guard qpdf_oh_is_name_and_equals(handle, qpdf_oh_get_key(handle, dictionary, "/Subtype"), "/Form") != 0 else { continue }
            // Deeper than this, a form is taken to have text rather than followed further (and round a loop).
            if depth >= 4 { return true }
            if hasFonts(handle, qpdf_oh_get_key(handle, dictionary, "/Resources"), depth: depth + 1) { return true }
        }
        return false
    }

    /// The first line of every content stream this module adds, so that a later run can find and drop them.
    public static let textLayerMarker = "%ocrfarm-text-layer"

    /// The PDF with `layers` laid over its pages, each as a content stream appended to the page (the page's own
    /// content streams wrapped in q/Q, so whatever state they leave does not move the text), with `fonts` (name
    /// without slash, index into `objects`) added to the page's font resources.
    ///
    /// Everything else is kept as it is: qpdf copies the page's content streams, images, annotations and the
    /// document's metadata without decoding them (the stream bytes are identical); it is written without encryption.
    /// With `replacingEarlier`, text layers this function added before are removed first. With `onlyPage`, the
    /// other pages are dropped (one page of a document, for the store).
    public static func addingText(to pdf: [UInt8], name: String, layers: [PageTextLayer], objects: [AddedObject],
                                  fonts: [(name: String, object: Int)], replacingEarlier: Bool = false,
                                  onlyPage: Int? = nil, compress: ([UInt8]) -> [UInt8]? = { _ in nil }) throws(QPDFError) -> [UInt8]
    {
        return try withHandle { handle, log throws(QPDFError) in
            func failure(_ what: String) -> QPDFError { QPDF.failure(what, name, handle: handle, log: log) }
            try read(pdf, into: handle, log: log, name: name)
            let pageCount = Int(qpdf_get_num_pages(handle))
            guard pageCount > 0 else { throw QPDFError(operation: "read \(name)", message: "the PDF has no pages") }
            for layer in layers where !(0..<pageCount).contains(layer.page) {
                throw QPDFError(operation: "add text to \(name)", message: "no page \(layer.page + 1) (the PDF has \(pageCount))")
            }
            // Resources and boxes may be inherited from the page tree: on the page itself they can be changed for it.
            qpdf_push_inherited_attributes_to_page(handle)

            var made: [qpdf_oh] = []
            for object in objects {
                // qpdf's C parser takes no indirect references: each `@n` is parsed as a name standing for the
                // object, and replaced by it.
                var text = object.dictionary
                for index in made.indices.reversed() { text = text.replacingAll("@\(index)", with: "/\(referencePrefix)\(index)") }
                let dictionary = qpdf_oh_parse(handle, text)
                guard qpdf_oh_is_dictionary(handle, dictionary) != 0 else {
                    throw QPDFError(operation: "add text to \(name)", message: "not a dictionary: \(object.dictionary)")
                }
                resolveReferences(handle, in: dictionary, to: made)
                if let data = object.stream {
                    let stream = newStream(handle, data, compress: compress)
                    copyKeys(handle, from: dictionary, to: qpdf_oh_get_dict(handle, stream))
                    made.append(qpdf_make_indirect_object(handle, stream))
                } else {
                    made.append(qpdf_make_indirect_object(handle, dictionary))
                }
            }

            let texts = layers.map { layer in
                let matrix = displayMatrix(handle, qpdf_get_page_n(handle, layer.page), width: layer.width, height: layer.height)
                return (page: layer.page,
                        text: Array((textLayerMarker + "\nQ\nq\n" + matrix + "\n").utf8) + layer.content + Array("\nQ\n".utf8))
            }
            lay(handle, texts, fonts: fonts.compactMap { made.indices.contains($0.object) ? ($0.name, made[$0.object]) : nil },
                replacingEarlier: replacingEarlier, compress: compress)
            // The turn after the layer: the layer's matrix is the page's as it was shown, which /Rotate does not move.
            for layer in layers where layer.turn % 360 != 0 {
                let page = qpdf_get_page_n(handle, layer.page)
                setRotation(handle, page, (rotation(handle, page) + layer.turn) % 360)
            }
            if let onlyPage {
                guard (0..<pageCount).contains(onlyPage) else {
                    throw QPDFError(operation: "select page of \(name)", message: "no page \(onlyPage + 1)")
                }
                let others = (0..<pageCount).filter { $0 != onlyPage }.map { qpdf_get_page_n(handle, $0) }
                for page in others where qpdf_remove_page(handle, page) & Int32(QPDF_ERRORS) != 0 {
                    throw failure("select page of")
                }
            }
            return try written(handle, failure: failure)
        }
    }

    /// A new stream of `data`. The page's own streams are written as they are (qpdf would compress every
    /// uncompressed stream, changing the page's bytes), so the ones added here are compressed by the caller's zlib.
    private static func newStream(_ handle: qpdf_data?, _ data: [UInt8], compress: ([UInt8]) -> [UInt8]?) -> qpdf_oh {
        let stream = qpdf_oh_new_stream(handle)
        let compressed = compress(data)
        (compressed ?? data).withUnsafeBufferPointer { buffer in
            qpdf_oh_replace_stream_data(handle, stream, buffer.baseAddress, buffer.count,
                                        compressed == nil ? qpdf_oh_new_null(handle) : qpdf_oh_new_name(handle, "/FlateDecode"),
                                        qpdf_oh_new_null(handle))
        }
        return stream
    }

    /// The document on `handle` written to memory: every stream copied as it is (not decoded, not compressed
    /// again), an end of line before every `endstream` (PDF/A wants one; outside the stream data), and without
    /// encryption: a PDF read without a password (restricted by an owner password alone) is written without its
    /// restrictions, so that every reader of the page (the coordinator's check, export, a viewer) can open it.
    private static func written(_ handle: qpdf_data?, failure: (String) -> QPDFError) throws(QPDFError) -> [UInt8] {
        guard qpdf_has_error(handle) == 0, qpdf_init_write_memory(handle) & Int32(QPDF_ERRORS) == 0 else {
            throw failure("update")
        }
        qpdf_set_decode_level(handle, qpdf_dl_none)
        qpdf_set_compress_streams(handle, 0)
        qpdf_set_preserve_encryption(handle, 0)
        qpdf_set_newline_before_endstream(handle, 1)
        guard qpdf_write(handle) & Int32(QPDF_ERRORS) == 0, qpdf_has_error(handle) == 0,
              let buffer = qpdf_get_buffer(handle) else { throw failure("write") }
        return Array(UnsafeBufferPointer(start: buffer, count: Int(qpdf_get_buffer_length(handle))))
    }

    /// Lays each of `texts` (a text layer's whole content stream, marker first) over its page: the page's own content
    /// streams wrapped in q/Q (an opening stream with the marker and `q`), the layer appended, `fonts` added to the
    /// page's font resources. With `replacingEarlier`, the streams an earlier run added are removed first.
    private static func lay(_ handle: qpdf_data?, _ texts: [(page: Int, text: [UInt8])], fonts: [(name: String, object: qpdf_oh)],
                            replacingEarlier: Bool, compress: ([UInt8]) -> [UInt8]?)
    {
        for layer in texts {
            let page = qpdf_get_page_n(handle, layer.page)
            var contents = contentStreams(handle, page)
            if replacingEarlier {
                contents.removeAll { stream in
                    let data = streamData(handle, stream)
                    return data.starts(with: Array(textLayerMarker.utf8))
                }
            }
            let opening = Array((textLayerMarker + "\nq\n").utf8)
            let array = qpdf_oh_new_array(handle)
            if !contents.isEmpty {
                qpdf_oh_append_item(handle, array, qpdf_make_indirect_object(handle, newStream(handle, opening, compress: compress)))
            }
            for stream in contents { qpdf_oh_append_item(handle, array, stream) }
            qpdf_oh_append_item(handle, array, qpdf_make_indirect_object(handle, newStream(handle, layer.text, compress: compress)))
            qpdf_oh_replace_key(handle, page, "/Contents", array)

            var resources = qpdf_oh_get_key(handle, page, "/Resources")
            if qpdf_oh_is_dictionary(handle, resources) == 0 {
                resources = qpdf_oh_new_dictionary(handle)
                qpdf_oh_replace_key(handle, page, "/Resources", resources)
            }
            var fontDictionary = qpdf_oh_get_key(handle, resources, "/Font")
            if qpdf_oh_is_dictionary(handle, fontDictionary) == 0 {
                fontDictionary = qpdf_oh_new_dictionary(handle)
                qpdf_oh_replace_key(handle, resources, "/Font", fontDictionary)
            }
            for font in fonts { qpdf_oh_replace_key(handle, fontDictionary, "/" + font.name, font.object) }
        }
    }

    /// The PDF `source` with the text layers of `pages` laid over its pages: each page file a one-page PDF that
    /// `addingText` made from page `page` (from 0) of the same document (with `onlyPage`). The layer (the last
    /// content stream `addingText` added to the page) is copied as it is, and its font (`fontName`) once from the
    /// first page file that has one, shared by every page. A page file without a new layer (a page kept with its
    /// own text: its content streams end as the page's do), and the pages not in `pages`, leave their page as it is.
    /// Everything else is kept as `addingText` keeps it: the outline, `/Info` and XMP metadata, annotations, links,
    /// and every stream's bytes.
    public static func addingTextLayers(to source: [UInt8], name: String, from pages: [(page: Int, path: String)], fontName: String,
                                        replacingEarlier: Bool = false,
                                        compress: ([UInt8]) -> [UInt8]? = { _ in nil }) throws(QPDFError) -> [UInt8]
    {
        // The layers first, one page file open at a time: the page's last content stream when it is one this
        // module added, and how many the page has.
        var found: [(page: Int, text: [UInt8], streams: Int, path: String)] = []
        // Each page file's /Rotate: a page turned upright (`PageTextLayer.turn`) is turned in the document too.
        var rotations: [(page: Int, degrees: Int)] = []
        for page in pages {
            let layer = try withHandle { handle, log throws(QPDFError) -> (text: [UInt8], streams: Int)? in
                guard qpdf_read(handle, page.path, nil) & Int32(QPDF_ERRORS) == 0, qpdf_has_error(handle) == 0,
                      qpdf_get_num_pages(handle) >= 1 else {
                    throw QPDFError(operation: "read \(page.path)", message: lastError(handle, log: log).message)
                }
                let opening = Array((textLayerMarker + "\nq\n").utf8), marker = Array(textLayerMarker.utf8)
                qpdf_push_inherited_attributes_to_page(handle)
                rotations.append((page.page, rotation(handle, qpdf_get_page_n(handle, 0))))
                let streams = contentStreams(handle, qpdf_get_page_n(handle, 0))
                guard let last = streams.last.map({ streamData(handle, $0) }), last.starts(with: marker), last != opening else {
                    return nil
                }
                return (last, streams.count)
            }
            if let layer { found.append((page.page, layer.text, layer.streams, page.path)) }
        }
        return try withHandle { handle, log throws(QPDFError) in
            func failure(_ what: String) -> QPDFError { QPDF.failure(what, name, handle: handle, log: log) }
            try read(source, into: handle, log: log, name: name)
            let pageCount = Int(qpdf_get_num_pages(handle))
            for text in found where !(0..<pageCount).contains(text.page) {
                throw QPDFError(operation: "add text to \(name)", message: "no page \(text.page + 1) (the PDF has \(pageCount))")
            }
            qpdf_push_inherited_attributes_to_page(handle)
            for turned in rotations where (0..<pageCount).contains(turned.page) {
                let page = qpdf_get_page_n(handle, turned.page)
                if rotation(handle, page) != turned.degrees { setRotation(handle, page, turned.degrees) }
            }
            // A page file whose content streams end as its page's do is the page kept as it was (`--pdf-text skip`
            // on a page with a layer from an earlier run, or a layer read again to the same text): nothing to add.
            let texts = found.filter { layer in
                let streams = contentStreams(handle, qpdf_get_page_n(handle, layer.page))
                return !(streams.count == layer.streams && streams.last.map { streamData(handle, $0) } == layer.text)
            }.map { (page: $0.page, text: $0.text) }
            let donor = found.first { layer in texts.contains { $0.page == layer.page } }?.path
            guard let donor else { return try written(handle, failure: failure) }
            // The font is copied from the donor, which stays open until the document is written (qpdf copies a
            // foreign stream's data when writing).
            return try withHandle { other, otherLog throws(QPDFError) in
                guard qpdf_read(other, donor, nil) & Int32(QPDF_ERRORS) == 0, qpdf_has_error(other) == 0 else {
                    throw QPDFError(operation: "read \(donor)", message: lastError(other, log: otherLog).message)
                }
                qpdf_push_inherited_attributes_to_page(other)
                let fonts = qpdf_oh_get_key(other, qpdf_oh_get_key(other, qpdf_get_page_n(other, 0), "/Resources"), "/Font")
                let font = qpdf_oh_get_key(other, fonts, "/" + fontName)
                guard qpdf_oh_is_dictionary(other, font) != 0 else {
                    throw QPDFError(operation: "read \(donor)", message: "no font /\(fontName) on its page")
                }
                let copied = qpdf_oh_copy_foreign_object(handle, other, font)
                guard qpdf_has_error(handle) == 0 else { throw failure("copy the text layer's font into") }
                lay(handle, texts, fonts: [(fontName, copied)], replacingEarlier: replacingEarlier, compress: compress)
                return try written(handle, failure: failure)
            }
        }
    }

    private static let referencePrefix = "OCRFarmAddedObject"

    /// Replaces the names standing for added objects (`/OCRFarmAddedObjectN`) in `container`, a dictionary or array
    /// and those within it, by the objects.
    private static func resolveReferences(_ handle: qpdf_data?, in container: qpdf_oh, to made: [qpdf_oh]) {
        func resolved(_ item: qpdf_oh) -> qpdf_oh? {
            guard qpdf_oh_is_name(handle, item) != 0, let raw = qpdf_oh_get_name(handle, item) else { return nil }
            let name = String(cString: raw)
            guard name.hasPrefix("/" + referencePrefix), let index = Int(name.dropFirst(referencePrefix.count + 1)),
                  made.indices.contains(index) else { return nil }
            return made[index]
        }
        if qpdf_oh_is_array(handle, container) != 0 {
            for index in 0..<qpdf_oh_get_array_n_items(handle, container) {
                let item = qpdf_oh_get_array_item(handle, container, index)
                if let object = resolved(item) {
                    qpdf_oh_set_array_item(handle, container, index, object)
                } else if qpdf_oh_is_array(handle, item) != 0 || qpdf_oh_is_dictionary(handle, item) != 0 {
                    resolveReferences(handle, in: item, to: made)
                }
            }
        } else if qpdf_oh_is_dictionary(handle, container) != 0 {
            var keys: [String] = []
            qpdf_oh_begin_dict_key_iter(handle, container)
            while qpdf_oh_dict_more_keys(handle) != 0, let key = qpdf_oh_dict_next_key(handle) { keys.append(String(cString: key)) }
            for key in keys {
                let item = qpdf_oh_get_key(handle, container, key)
                if let object = resolved(item) {
                    qpdf_oh_replace_key(handle, container, key, object)
                } else if qpdf_oh_is_array(handle, item) != 0 || qpdf_oh_is_dictionary(handle, item) != 0 {
                    resolveReferences(handle, in: item, to: made)
                }
            }
        }
    }

    /// The page's content streams in order (none when it has no /Contents).
    private static func contentStreams(_ handle: qpdf_data?, _ page: qpdf_oh) -> [qpdf_oh] {
        let contents = qpdf_oh_get_key(handle, page, "/Contents")
        if qpdf_oh_is_stream(handle, contents) != 0 { return [contents] }
        guard qpdf_oh_is_array(handle, contents) != 0 else { return [] }
        return (0..<qpdf_oh_get_array_n_items(handle, contents)).map { qpdf_oh_get_array_item(handle, contents, $0) }
            .filter { qpdf_oh_is_stream(handle, $0) != 0 }
    }

    /// A stream's decoded data (empty when it cannot be decoded).
    private static func streamData(_ handle: qpdf_data?, _ stream: qpdf_oh) -> [UInt8] {
        var data: UnsafeMutablePointer<UInt8>?
        var length = 0
        var filtered: Int32 = 0
        guard qpdf_oh_get_stream_data(handle, stream, qpdf_dl_generalized, &filtered, &data, &length) & Int32(QPDF_ERRORS) == 0,
              let data else { return [] }
        // qpdf hands over a malloc'd copy, which is ours to free.
        defer { free(data) }
        return Array(UnsafeBufferPointer(start: data, count: length))
    }

    private static func copyKeys(_ handle: qpdf_data?, from source: qpdf_oh, to target: qpdf_oh) {
        qpdf_oh_begin_dict_key_iter(handle, source)
        while qpdf_oh_dict_more_keys(handle) != 0 {
            guard let key = qpdf_oh_dict_next_key(handle) else { break }
            let name = String(cString: key)
            qpdf_oh_replace_key(handle, target, name, qpdf_oh_get_key(handle, source, name))
        }
    }

    /// The `cm` operators that take a space of `width` × `height` (the page as shown, y up) to the page's user space:
    /// scaled to the visible box (the crop box within the media box, where viewers and renderers draw the page),
    /// turned back by /Rotate, moved to the box's origin.
    /// The page's visible box: its crop box within its media box (where viewers and renderers draw it).
    private static func visibleBox(_ handle: qpdf_data?, _ page: qpdf_oh) -> (Double, Double, Double, Double) {
        func box(_ key: String) -> (Double, Double, Double, Double)? {
            let array = qpdf_oh_get_key(handle, page, key)
            guard qpdf_oh_is_array(handle, array) != 0, qpdf_oh_get_array_n_items(handle, array) == 4 else { return nil }
            let values = (0..<4).map { qpdf_oh_get_numeric_value(handle, qpdf_oh_get_array_item(handle, array, Int32($0))) }
            return (min(values[0], values[2]), min(values[1], values[3]), max(values[0], values[2]), max(values[1], values[3]))
        }
        let media = box("/MediaBox") ?? (0, 0, 612, 792)
        var visible = box("/CropBox") ?? media
        visible = (max(visible.0, media.0), max(visible.1, media.1), min(visible.2, media.2), min(visible.3, media.3))
        if visible.2 <= visible.0 || visible.3 <= visible.1 { visible = media }
        return visible
    }

    /// Sets the page's /Rotate (removed for 0).
    private static func setRotation(_ handle: qpdf_data?, _ page: qpdf_oh, _ degrees: Int) {
        if degrees == 0 {
            qpdf_oh_remove_key(handle, page, "/Rotate")
        } else {
            qpdf_oh_replace_key(handle, page, "/Rotate", qpdf_oh_new_integer(handle, Int64(degrees)))
        }
    }

    /// The page's /Rotate as 0, 90, 180 or 270.
    private static func rotation(_ handle: qpdf_data?, _ page: qpdf_oh) -> Int {
        let rotateKey = qpdf_oh_get_key(handle, page, "/Rotate")
        let rotate = qpdf_oh_is_integer(handle, rotateKey) != 0
            ? ((Int(qpdf_oh_get_int_value(handle, rotateKey)) % 360) + 360) % 360 : 0
        return rotate / 90 * 90
    }

    static func displayMatrix(_ handle: qpdf_data?, _ page: qpdf_oh, width: Double, height: Double) -> String {
        let (llx, lly, urx, ury) = visibleBox(handle, page)
        let rotate = rotation(handle, page)
        let turned = rotate == 90 || rotate == 270
        let (shownWidth, shownHeight) = turned ? (ury - lly, urx - llx) : (urx - llx, ury - lly)
        let scale = (x: shownWidth / max(width, 1e-9), y: shownHeight / max(height, 1e-9))
        // Where the shown page's axes lie in user space (a viewer turns the page clockwise by /Rotate).
        let turn: [Double] = switch rotate {
        case 90: [0, 1, -1, 0, urx, lly]
        case 180: [-1, 0, 0, -1, urx, ury]
        case 270: [0, -1, 1, 0, llx, ury]
        default: [1, 0, 0, 1, llx, lly]
        }
        return turn.map(number).joined(separator: " ") + " cm " + [scale.x, 0, 0, scale.y, 0, 0].map(number).joined(separator: " ") + " cm"
    }

    /// A number for a content stream: at most five decimals, never in exponent form.
    static func number(_ value: Double) -> String {
        let scaled = Int64((value * 100_000).rounded())
        let sign = scaled < 0 ? "-" : ""
        let magnitude = scaled.magnitude
        let whole = magnitude / 100_000, fraction = magnitude % 100_000
        guard fraction != 0 else { return sign + String(whole) }
        var digits = String(fraction)
        digits = String(repeating: "0", count: 5 - digits.count) + digits
        while digits.last == "0" { digits.removeLast() }
        return sign + String(whole) + "." + digits
    }
}

extension String {
    fileprivate func replacingAll(_ target: String, with replacement: String) -> String {
        let needle = Array(target.utf8), haystack = Array(utf8)
        guard !needle.isEmpty, haystack.count >= needle.count else { return self }
        var out: [UInt8] = []
        var index = 0
        while index < haystack.count {
            if index + needle.count <= haystack.count && haystack[index..<index + needle.count].elementsEqual(needle) {
                out += replacement.utf8
                index += needle.count
            } else {
                out.append(haystack[index])
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
