import Testing
import TestSupport
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// The ALTO v4 and PAGE 2019 XSDs are not available offline here, so these tests check what the schemas require
/// of the documents we write, rule by rule: element order, required attributes, value types and ranges, unique
/// IDs, references that resolve, coordinates inside the image.
@Suite("ALTO v4 and PAGE 2019 structure (end to end)")
struct SchemaStructureTests {
    static let pages: [(image: String, languages: String)] = [
        (Fixtures.path("tesseract-testdata/phototest-rotated-R.png"), "eng"),   // a turned scan
        (Fixtures.packageRoot + "/Samples/pages/photo-000.jpg", "eng"),         // a perspective photo
        (Fixtures.packageRoot + "/Samples/pages/cjk-000.png", "chi_sim+eng"),   // Chinese with English
    ]

    func document(_ image: String, _ languages: String, _ format: String) throws -> XMLNode {
        let run = try Run.ocrfarm(["ocr", image, "--lang", languages, "--format", format])
        #expect(run.status == 0, "\(run.stderr)")
        return try #require(XMLNode.parse(Data(run.stdout)), "\(format) of \(image) is not well-formed XML")
    }

    @Test("ALTO: sequence, required attributes, types, unique IDs, boxes inside the page", arguments: pages)
    func alto(page: (image: String, languages: String)) throws {
        let root = try document(page.image, page.languages, "alto")
        #expect(root.name == "alto" && root.attributes["xmlns"] == "http://www.loc.gov/standards/alto/ns-v4#")
        #expect(root.children.map(\.name).filter { ["Description", "Styles", "Tags", "Layout"].contains($0) }
                == root.children.map(\.name), "alto holds only its four parts")
        #expect(root.children.last?.name == "Layout" && root.children.first?.name == "Description")
        let description = try #require(root.child("Description"))
        #expect(["pixel", "mm10", "inch1200"].contains(description.child("MeasurementUnit")?.text ?? ""))
        #expect(description.child("sourceImageInformation")?.child("fileName")?.text.isEmpty == false)

        var ids: [String] = []
        for node in root.all() { if let id = node.attributes["ID"] { ids.append(id) } }
        #expect(Set(ids).count == ids.count, "IDs are unique (xsd:ID)")

        for pageNode in root.all(named: "Page") {
            #expect(pageNode.attributes["ID"] != nil && pageNode.double("PHYSICAL_IMG_NR") != nil)
            let width = try #require(pageNode.double("WIDTH")), height = try #require(pageNode.double("HEIGHT"))
            for block in pageNode.all(named: "TextBlock") {
                #expect(block.attributes["ID"] != nil)
                #expect(block.children.map(\.name).allSatisfy { ["Shape", "TextLine"].contains($0) })
            }
            for line in pageNode.all(named: "TextLine") {
                #expect(line.children.map(\.name).allSatisfy { ["Shape", "String", "SP", "HYP"].contains($0) })
                #expect(line.children.contains { $0.name == "String" }, "a TextLine holds at least one String")
            }
            let positioned = pageNode.all(named: "TextBlock") + pageNode.all(named: "TextLine") + pageNode.all(named: "String")
            #expect(!positioned.isEmpty)
            for node in positioned {
                let (x, y, w, h) = (node.double("HPOS"), node.double("VPOS"), node.double("WIDTH"), node.double("HEIGHT"))
                #expect(x != nil && y != nil && w != nil && h != nil, "\(node.name) \(node.attributes)")
                if let x, let y, let w, let h {
                    #expect(x >= 0 && y >= 0 && w >= 0 && h >= 0 && x + w <= width && y + h <= height, "\(node.attributes)")
                }
            }
            for string in pageNode.all(named: "String") {
                #expect(string.attributes["CONTENT"]?.isEmpty == false)
                if let confidence = string.double("WC") { #expect((0...1).contains(confidence)) }
                #expect(string.children.map(\.name).allSatisfy { ["Shape", "ALTERNATIVE", "Glyph"].contains($0) })
            }
            for polygon in pageNode.all(named: "Polygon") {
                #expect(Self.points(polygon.attributes["POINTS"] ?? "", inside: (width, height)) >= 3)
            }
        }
    }

    @Test("PAGE: sequence, required attributes, dates, points, unique IDs, reading order that resolves", arguments: pages)
    func page(page: (image: String, languages: String)) throws {
        let root = try document(page.image, page.languages, "page")
        #expect(root.name == "PcGts"
                && root.attributes["xmlns"] == "http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15")
        #expect(root.children.map(\.name) == ["Metadata", "Page"])
        let metadata = try #require(root.child("Metadata"))
        #expect(Array(metadata.children.map(\.name).prefix(3)) == ["Creator", "Created", "LastChange"])
        for name in ["Created", "LastChange"] {
            let date = metadata.child(name)?.text ?? ""
            #expect(date.range(of: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?$"#,
                               options: .regularExpression) != nil, "\(name) is an xsd:dateTime: \(date)")
        }
        let pageNode = try #require(root.child("Page"))
        #expect(pageNode.attributes["imageFilename"]?.isEmpty == false)
        let width = try #require(pageNode.double("imageWidth")), height = try #require(pageNode.double("imageHeight"))
        // Page content order: ReadingOrder before the regions.
        let names = pageNode.children.map(\.name)
        if let order = names.firstIndex(of: "ReadingOrder"), let region = names.firstIndex(of: "TextRegion") {
            #expect(order < region)
        }

        var ids: [String] = []
        for node in root.all() { if let id = node.attributes["id"] { ids.append(id) } }
        #expect(Set(ids).count == ids.count, "ids are unique (xsd:ID)")
        let regions = Set(pageNode.all(named: "TextRegion").compactMap { $0.attributes["id"] })
        #expect(!regions.isEmpty)
        for reference in pageNode.all(named: "RegionRefIndexed") {
            #expect(regions.contains(reference.attributes["regionRef"] ?? ""), "regionRef resolves")
            #expect(reference.double("index") != nil)
        }
        let languages: Set<String> = ["English", "Chinese", "German", "French", "Spanish", "Japanese", "Russian"]
        for region in pageNode.all(named: "TextRegion") {
            if let language = region.attributes["primaryLanguage"] { #expect(languages.contains(language), "\(language)") }
        }
        let orders: [String: [String]] = [
            "TextRegion": ["AlternativeImage", "Coords", "UserDefined", "Labels", "Roles", "TextRegion", "TextLine", "TextEquiv", "TextStyle"],
            "TextLine": ["AlternativeImage", "Coords", "Baseline", "Word", "TextEquiv", "TextStyle"],
            "Word": ["AlternativeImage", "Coords", "Glyph", "TextEquiv", "TextStyle"],
        ]
        for (name, order) in orders {
            for node in pageNode.all(named: name) {
                #expect(node.attributes["id"] != nil)
                #expect(node.children.first?.name == "Coords", "\(name) starts with its Coords")
                let positions = node.children.map { order.firstIndex(of: $0.name) ?? -1 }
                #expect(!positions.contains(-1) && positions == positions.sorted(), "\(name) children in schema order")
            }
        }
        for coords in pageNode.all(named: "Coords") {
            #expect(Self.points(coords.attributes["points"] ?? "", inside: (width, height)) >= 3)
        }
        for equivalent in pageNode.all(named: "TextEquiv") {
            #expect(equivalent.child("Unicode") != nil, "TextEquiv requires Unicode")
            if let confidence = equivalent.double("conf") { #expect((0...1).contains(confidence)) }
        }
        #expect(!pageNode.all(named: "Word").isEmpty)
    }

    /// The number of points in a "x,y x,y …" list of non-negative integers inside the image; 0 when malformed.
    static func points(_ list: String, inside size: (Double, Double)) -> Int {
        let pairs = list.split(separator: " ").map { $0.split(separator: ",").compactMap { Double($0) } }
        guard pairs.allSatisfy({ $0.count == 2 && $0[0] >= 0 && $0[1] >= 0 && $0[0] <= size.0 && $0[1] <= size.1 }),
              !list.contains(".") else { return 0 }
        return pairs.count
    }
}

/// A parsed XML element: enough of a DOM to check a document's structure.
final class XMLNode {
    let name: String
    let attributes: [String: String]
    var children: [XMLNode] = []
    var text = ""

    init(name: String, attributes: [String: String]) {
        self.name = name
        self.attributes = attributes
    }

    func child(_ name: String) -> XMLNode? { children.first { $0.name == name } }
    func double(_ attribute: String) -> Double? { attributes[attribute].flatMap(Double.init) }

    /// This element and every element below it, in document order.
    func all() -> [XMLNode] { [self] + children.flatMap { $0.all() } }
    func all(named name: String) -> [XMLNode] { all().filter { $0.name == name } }

    static func parse(_ data: Data) -> XMLNode? {
        let builder = Builder()
        let parser = XMLParser(data: data)
        parser.delegate = builder
        return parser.parse() ? builder.root : nil
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var root: XMLNode?
        var stack: [XMLNode] = []

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            let node = XMLNode(name: name, attributes: attributes)
            if let parent = stack.last { parent.children.append(node) } else { root = node }
            stack.append(node)
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            stack.removeLast()
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            stack.last?.text += string.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }
}
