/// One Image API 3.0 image request, `{region}/{size}/{rotation}/{quality}.{format}`, resolved against the size of
/// the image: which pixels to cut out and how large to make them. Pure; parsing errors are the 400s of the spec.
///
/// What is supported is level 1 and a little more (declared in info.json's `extraFeatures`, `extraQualities` and
/// `extraFormats`): regions `full`, `square`, `x,y,w,h`, `pct:x,y,w,h`; sizes `max`, `w,`, `,h`, `w,h`, `pct:n`,
/// `!w,h`; rotation `0` only; qualities `default`, `color`, `gray`, `bitonal`; formats `jpg` and `png`.
/// Upscaling is refused: the `^` forms and any size larger than the region are 400.
public struct ImageRequest: Sendable, Equatable {
    public enum Quality: String, Sendable, Equatable { case `default`, color, gray, bitonal }
    public enum Format: String, Sendable, Equatable {
        case jpg, png
        public var mediaType: String { self == .jpg ? "image/jpeg" : "image/png" }
    }

    /// The pixels cut out of the image, clipped to it.
    public let region: PixelRect
    /// The size of the answer, at most the region's (no upscaling).
    public let width: Int
    public let height: Int
    public let quality: Quality
    public let format: Format

    /// Why a request cannot be answered: a 400 with the reason.
    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
        init(_ reason: String) { self.reason = reason }
    }

    /// Resolves the four path parameters against an image of `imageWidth` × `imageHeight`.
    public init(region: String, size: String, rotation: String, qualityAndFormat: String,
                imageWidth: Int, imageHeight: Int) throws(Invalid)
    {
        let cut = try Self.region(region, width: imageWidth, height: imageHeight)
        let (w, h) = try Self.size(size, regionWidth: cut.width, regionHeight: cut.height)
        // Rotation 0 only (level 1): `!0` (mirrored) and other angles are valid syntax this server does not do.
        guard rotation == "0" else {
            throw Invalid("rotation '\(rotation)' is not supported (level 1: 0 only)")
        }
        guard let dot = qualityAndFormat.lastIndex(of: ".") else {
            throw Invalid("'\(qualityAndFormat)' is not quality.format")
        }
        let qualityName = String(qualityAndFormat[..<dot])
        let formatName = String(qualityAndFormat[qualityAndFormat.index(after: dot)...])
        guard let quality = Quality(rawValue: qualityName) else {
            throw Invalid("quality '\(qualityName)' is not supported (default, color, gray, bitonal)")
        }
        guard let format = Format(rawValue: formatName) else {
            throw Invalid("format '\(formatName)' is not supported (jpg, png)")
        }
        self.region = cut
        self.width = w
        self.height = h
        self.quality = quality
        self.format = format
    }

    /// A rectangle of image pixels (origin top left).
    public struct PixelRect: Sendable, Equatable {
        public let x: Int, y: Int, width: Int, height: Int
    }

    static func region(_ text: String, width: Int, height: Int) throws(Invalid) -> PixelRect {
        switch text {
        case "full":
            return PixelRect(x: 0, y: 0, width: width, height: height)
        case "square":
            let side = min(width, height)
            return PixelRect(x: (width - side) / 2, y: (height - side) / 2, width: side, height: side)
        default:
            break
        }
        let x, y, w, h: Int
        if text.hasPrefix("pct:") {
            let numbers = try numbers(String(text.dropFirst(4)), count: 4, what: "region")
            guard numbers[2] > 0, numbers[3] > 0 else { throw Invalid("region '\(text)' is empty") }
            // Percentages of the full image; the far edge is rounded like the near one, so adjacent regions tile.
            let left = numbers[0] * Double(width) / 100, top = numbers[1] * Double(height) / 100
            x = Int(left.rounded())
            y = Int(top.rounded())
            w = Int((left + numbers[2] * Double(width) / 100).rounded()) - x
            h = Int((top + numbers[3] * Double(height) / 100).rounded()) - y
        } else {
            let parts = text.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 4, let px = Int(parts[0]), let py = Int(parts[1]), let pw = Int(parts[2]),
                  let ph = Int(parts[3]), parts.allSatisfy({ $0.allSatisfy(\.isASCIIDigit) })
            else { throw Invalid("region '\(text)' is not full, square, x,y,w,h or pct:x,y,w,h") }
            (x, y, w, h) = (px, py, pw, ph)
        }
        guard w > 0, h > 0 else { throw Invalid("region '\(text)' is empty") }
        // A region entirely outside the image is an error; one partly outside is cut to the image (the spec).
        guard x < width, y < height else { throw Invalid("region '\(text)' is outside the \(width)x\(height) image") }
        return PixelRect(x: x, y: y, width: min(w, width - x), height: min(h, height - y))
    }

    static func size(_ text: String, regionWidth rw: Int, regionHeight rh: Int) throws(Invalid) -> (Int, Int) {
        if text.hasPrefix("^") { throw Invalid("size '\(text)': upscaling (^) is not supported") }
        func scaled(_ value: Int, by factor: Double) -> Int { max(1, Int((Double(value) * factor).rounded())) }
        func refuseUpscaling(_ w: Int, _ h: Int) throws(Invalid) -> (Int, Int) {
            guard w <= rw, h <= rh else {
                throw Invalid("size '\(text)' is larger than the \(rw)x\(rh) region (upscaling is not supported)")
            }
            return (w, h)
        }
        if text == "max" { return (rw, rh) }
        if text.hasPrefix("pct:") {
            let n = try numbers(String(text.dropFirst(4)), count: 1, what: "size")[0]
            guard n > 0 else { throw Invalid("size '\(text)' is empty") }
            guard n <= 100 else { throw Invalid("size '\(text)' is an upscale (upscaling is not supported)") }
            return (scaled(rw, by: n / 100), scaled(rh, by: n / 100))
        }
        let confined = text.hasPrefix("!")
        let body = confined ? String(text.dropFirst()) : text
        let parts = body.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.allSatisfy(\.isASCIIDigit) }) else {
            throw Invalid("size '\(text)' is not max, w,, ,h, w,h, !w,h or pct:n")
        }
        let w = Int(parts[0]), h = Int(parts[1])
        if let w, w == 0 { throw Invalid("size '\(text)' is empty") }
        if let h, h == 0 { throw Invalid("size '\(text)' is empty") }
        switch (w, h, confined) {
        case (let w?, nil, false): return try refuseUpscaling(w, scaled(rh, by: Double(w) / Double(rw)))
        case (nil, let h?, false): return try refuseUpscaling(scaled(rw, by: Double(h) / Double(rh)), h)
        case (let w?, let h?, false): return try refuseUpscaling(w, h)
        case (let w?, let h?, true):
            // The largest size within w × h that keeps the aspect ratio; filling a box larger than the region
            // would be an upscale, which needs `^!w,h` (not supported).
            let factor = min(Double(w) / Double(rw), Double(h) / Double(rh))
            guard factor <= 1 else {
                throw Invalid("size '\(text)' would scale the \(rw)x\(rh) region up (upscaling is not supported)")
            }
            return (min(w, scaled(rw, by: factor)), min(h, scaled(rh, by: factor)))
        default:
            throw Invalid("size '\(text)' is not max, w,, ,h, w,h, !w,h or pct:n")
        }
    }

    /// `count` comma-separated non-negative decimals.
    static func numbers(_ text: String, count: Int, what: String) throws(Invalid) -> [Double] {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        var values: [Double] = []
        for part in parts {
            // Plain decimals only: Double("1e3"), "inf" and "nan" parse too, and mean nothing here.
            guard !part.isEmpty, part.allSatisfy({ $0.isASCIIDigit || $0 == "." }), let value = Double(part),
                  value.isFinite
            else { throw Invalid("\(what) 'pct:\(text)' needs \(count) decimal numbers") }
            values.append(value)
        }
        guard values.count == count else { throw Invalid("\(what) 'pct:\(text)' needs \(count) numbers") }
        return values
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
