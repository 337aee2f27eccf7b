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

    public init(page: Int, width: Double, height: Double, content: [UInt8]) {
        self.page = page
        self.width = width
        self.height = height
        self.content = content
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
            let rc = pdf.withUnsafeBufferPointer { buffer in
                buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { chars in
                    qpdf_read_memory(handle, name, chars, UInt64(buffer.count), nil)
                }
            }
            guard rc & Int32(QPDF_ERRORS) == 0, qpdf_has_error(handle) == 0 else {
                let error = lastError(handle, log: log)
                throw QPDFError(operation: "read \(name)", message: error.message, kind: error.needsPassword ? .password : .failed)
            }
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
    /// document's metadata without decoding them (the stream bytes are identical), and keeps any encryption.
    /// With `replacingEarlier`, text layers this function added before are removed first. With `onlyPage`, the
    /// other pages are dropped (one page of a document, for the store).
    public static func addingText(to pdf: [UInt8], name: String, layers: [PageTextLayer], objects: [AddedObject],
                                  fonts: [(name: String, object: Int)], replacingEarlier: Bool = false,
                                  onlyPage: Int? = nil, compress: ([UInt8]) -> [UInt8]? = { _ in nil }) throws(QPDFError) -> [UInt8]
    {
        // The page's own streams are written as they are (qpdf would compress every uncompressed stream, changing
        // the page's bytes), so the ones added here are compressed by the caller's zlib.
        func newStream(_ handle: qpdf_data?, _ data: [UInt8]) -> qpdf_oh {
            let stream = qpdf_oh_new_stream(handle)
            let compressed = compress(data)
            let bytes = compressed ?? data
            bytes.withUnsafeBufferPointer { buffer in
                qpdf_oh_replace_stream_data(handle, stream, buffer.baseAddress, buffer.count,
                                            compressed == nil ? qpdf_oh_new_null(handle) : qpdf_oh_new_name(handle, "/FlateDecode"),
                                            qpdf_oh_new_null(handle))
            }
            return stream
        }
        return try withHandle { handle, log throws(QPDFError) in
            func failure(_ what: String) -> QPDFError {
                let error = lastError(handle, log: log)
                return QPDFError(operation: "\(what) \(name)", message: error.message.isEmpty ? "qpdf failed" : error.message,
                                 kind: error.needsPassword ? .password : .failed)
            }
            let rc = pdf.withUnsafeBufferPointer { buffer in
                buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { chars in
                    qpdf_read_memory(handle, name, chars, UInt64(buffer.count), nil)
                }
            }
            guard rc & Int32(QPDF_ERRORS) == 0, qpdf_has_error(handle) == 0 else { throw failure("read") }
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
                    let stream = newStream(handle, data)
                    copyKeys(handle, from: dictionary, to: qpdf_oh_get_dict(handle, stream))
                    made.append(qpdf_make_indirect_object(handle, stream))
                } else {
                    made.append(qpdf_make_indirect_object(handle, dictionary))
                }
            }

            for layer in layers {
                let page = qpdf_get_page_n(handle, layer.page)
                var contents = contentStreams(handle, page)
                if replacingEarlier {
                    contents.removeAll { stream in
                        let data = streamData(handle, stream)
                        return data.starts(with: Array(textLayerMarker.utf8))
                    }
                }
                let matrix = displayMatrix(handle, page, width: layer.width, height: layer.height)
                let opening = Array((textLayerMarker + "\nq\n").utf8)
                let text = Array((textLayerMarker + "\nQ\nq\n" + matrix + "\n").utf8) + layer.content + Array("\nQ\n".utf8)
                let array = qpdf_oh_new_array(handle)
                if !contents.isEmpty { qpdf_oh_append_item(handle, array, qpdf_make_indirect_object(handle, newStream(handle, opening))) }
                for stream in contents { qpdf_oh_append_item(handle, array, stream) }
                qpdf_oh_append_item(handle, array, qpdf_make_indirect_object(handle, newStream(handle, text)))
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
                for font in fonts where made.indices.contains(font.object) {
                    qpdf_oh_replace_key(handle, fontDictionary, "/" + font.name, made[font.object])
                }
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
            guard qpdf_has_error(handle) == 0, qpdf_init_write_memory(handle) & Int32(QPDF_ERRORS) == 0 else {
                throw failure("update")
            }
            // Every stream is copied as it is: not decoded, not compressed again.
            qpdf_set_decode_level(handle, qpdf_dl_none)
            qpdf_set_compress_streams(handle, 0)
            // An end of line before every `endstream`, as PDF/A wants (outside the stream data, which stays as it is).
            qpdf_set_newline_before_endstream(handle, 1)
            guard qpdf_write(handle) & Int32(QPDF_ERRORS) == 0, qpdf_has_error(handle) == 0,
                  let buffer = qpdf_get_buffer(handle) else { throw failure("write") }
            return Array(UnsafeBufferPointer(start: buffer, count: Int(qpdf_get_buffer_length(handle))))
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
