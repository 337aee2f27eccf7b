import FarmStore
import Testing
@testable import FarmIIIF

@Suite("IIIF Image API request parsing")
struct ImageRequestTests {
    func request(_ region: String = "full", _ size: String = "max", rotation: String = "0", _ qf: String = "default.jpg",
                 width: Int = 1000, height: Int = 800) throws(ImageRequest.Invalid) -> ImageRequest
    {
        try ImageRequest(region: region, size: size, rotation: rotation, qualityAndFormat: qf, imageWidth: width, imageHeight: height)
    }

    @Test("regions: full, square, pixels (cut to the image), percentages")
    func regions() throws {
        #expect(try request().region == .init(x: 0, y: 0, width: 1000, height: 800))
        #expect(try request("square").region == .init(x: 100, y: 0, width: 800, height: 800))
        #expect(try request("square", width: 300, height: 500).region == .init(x: 0, y: 100, width: 300, height: 300))
        #expect(try request("10,20,30,40").region == .init(x: 10, y: 20, width: 30, height: 40))
        #expect(try request("900,700,512,512").region == .init(x: 900, y: 700, width: 100, height: 100), "cut to the image")
        #expect(try request("pct:10,25,50,50").region == .init(x: 100, y: 200, width: 500, height: 400))
        #expect(try request("pct:0,0,100,100").region == .init(x: 0, y: 0, width: 1000, height: 800))
    }

    @Test("sizes: max, w,, ,h, w,h, !w,h, pct:n; the aspect ratio kept where only one side is given")
    func sizes() throws {
        #expect(try (request(size: "max").width, request(size: "max").height) == (1000, 800))
        #expect(try (request(size: "500,").width, request(size: "500,").height) == (500, 400))
        #expect(try (request(size: ",200").width, request(size: ",200").height) == (250, 200))
        #expect(try (request(size: "300,100").width, request(size: "300,100").height) == (300, 100))
        #expect(try (request(size: "!500,500").width, request(size: "!500,500").height) == (500, 400))
        #expect(try (request(size: "pct:25").width, request(size: "pct:25").height) == (250, 200))
        // A tile of a deep-zoom viewer: 1024 pixels of the image at scale factor 2 (the edge tile is smaller).
        let tile = try request("512,512,1024,1024", "244,")
        #expect(tile.region == .init(x: 512, y: 512, width: 488, height: 288))
        #expect((tile.width, tile.height) == (244, 144))
    }

    func request(size: String) throws(ImageRequest.Invalid) -> ImageRequest { try request("full", size) }

    @Test("bad or unsupported requests are refused with a reason (the spec's 400)", arguments: [
        ("full", "1001,", "0", "default.jpg"),       // upscaling
        ("full", ",801", "0", "default.jpg"),
        ("full", "1000,801", "0", "default.jpg"),
        ("full", "pct:200", "0", "default.jpg"),
        ("full", "!2000,3000", "0", "default.jpg"),  // would have to scale up to fill the box
        ("full", "^max", "0", "default.jpg"),        // ^ is not supported at level 1
        ("full", "^1200,", "0", "default.jpg"),
        ("full", "full", "0", "default.jpg"),        // 2.x's name of max
        ("full", "0,", "0", "default.jpg"),
        ("full", "abc", "0", "default.jpg"),
        ("full", "-5,", "0", "default.jpg"),
        ("1000,0,10,10", "max", "0", "default.jpg"),  // outside the image
        ("0,0,0,10", "max", "0", "default.jpg"),      // empty
        ("pct:1e2,0,10,10", "max", "0", "default.jpg"),
        ("frob", "max", "0", "default.jpg"),
        ("full", "max", "90", "default.jpg"),        // rotation 0 only
        ("full", "max", "!0", "default.jpg"),
        ("full", "max", "abcd", "default.jpg"),
        ("full", "max", "0", "native.jpg"),
        ("full", "max", "0", "default.tif"),
        ("full", "max", "0", "default"),
    ])
    func refused(_ region: String, _ size: String, _ rotation: String, _ qf: String) {
        #expect(throws: ImageRequest.Invalid.self) {
            try ImageRequest(region: region, size: size, rotation: rotation, qualityAndFormat: qf, imageWidth: 1000, imageHeight: 800)
        }
    }

    @Test("qualities and formats")
    func qualities() throws {
        #expect(try request(qf: "gray.png").quality == .gray)
        #expect(try request(qf: "gray.png").format == .png)
        #expect(try request(qf: "bitonal.jpg").quality == .bitonal)
        #expect(try request(qf: "color.jpg").format == .jpg)
    }

    func request(qf: String) throws(ImageRequest.Invalid) -> ImageRequest { try request("full", "max", qf) }

    @Test("info.json tiles: scale factors down to one tile for the whole image")
    func tiles() {
        #expect(ImageInfo.scaleFactors(width: 512, height: 300) == [1])
        #expect(ImageInfo.scaleFactors(width: 1000, height: 1000) == [1, 2])
        #expect(ImageInfo.scaleFactors(width: 2480, height: 3508) == [1, 2, 4, 8])
    }

    @Test("search terms: the words a page must contain, as index tokens, phrases and prefixes kept")
    func searchTerms() throws {
        let terms = ContentSearch.wanted(try SearchQuery("\"Free Software\" OR 君子 NOT draft").expression)
        #expect(terms.map(\.tokens) == [["free", "software"], ["君", "子"]])
        #expect(ContentSearch.wanted(try SearchQuery("licen*").expression).map(\.prefix) == [true])
    }
}
