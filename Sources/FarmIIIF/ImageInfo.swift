import FarmCore

/// The Image API 3.0 `info.json` of a page image.
enum ImageInfo {
    /// Tiles deep-zoom viewers ask for (OpenSeadragon, Mirador, UV): 512 pixels square at each scale factor down
    /// to the one where the whole image fits in one tile.
    static let tileSize = 512

    static func scaleFactors(width: Int, height: Int) -> [Int] {
        var factors = [1]
        while (max(width, height) + factors[factors.count - 1] - 1) / factors[factors.count - 1] > tileSize {
            factors.append(factors[factors.count - 1] * 2)
        }
        return factors
    }

    /// Served: level 1 with what else `ImageRequest` does. Static (`staticSizes`, level 0): only the sizes written.
    static func json(id: String, width: Int, height: Int, staticSizes: [(Int, Int)]? = nil) -> JSON {
        let isStatic = staticSizes != nil
        let factors = scaleFactors(width: width, height: height)
        let sizes: [JSON] = factors.reversed().map { factor in
            .object([("width", JSON((width + factor - 1) / factor)), ("height", JSON((height + factor - 1) / factor))])
        }
        var fields: [(String, JSON)] = [
            ("@context", JSON(Presentation.imageContext)),
            ("id", JSON(id)),
            ("type", "ImageService3"),
            ("protocol", "http://iiif.io/api/image"),
            ("profile", isStatic ? "level0" : "level1"),
            ("width", JSON(width)),
            ("height", JSON(height)),
        ]
        if isStatic {
            // Smallest first, as the spec's examples list them.
            fields.append(("sizes", .array((staticSizes ?? []).reversed().map { .object([("width", JSON($0.0)), ("height", JSON($0.1))]) })))
        } else {
            fields.append(("sizes", .array(sizes)))
            fields.append(("tiles", [.object([("width", JSON(tileSize)), ("height", JSON(tileSize)),
                                              ("scaleFactors", .array(factors.map { JSON($0) }))])]))
            fields.append(("extraFormats", ["png"]))
            fields.append(("extraQualities", ["color", "gray", "bitonal"]))
            // Beyond level 1 (regionByPx, regionSquare, sizeByW, sizeByH, sizeByWh, baseUriRedirect, cors,
            // jsonldMediaType): percentages and confined sizes. No rotation, mirroring or upscaling.
            fields.append(("extraFeatures", ["regionByPct", "sizeByPct", "sizeByConfinedWh"]))
        }
        return .object(fields)
    }
}
