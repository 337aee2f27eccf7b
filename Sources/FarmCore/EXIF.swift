/// Reads the orientation tag (0x0112) of a JPEG's EXIF block: how the camera held the picture.
public enum EXIF {
    /// 1 (upright) … 8, or nil when the file has no orientation.
    public static func orientation(of jpeg: [UInt8]) -> Int? {
        guard jpeg.count > 4, jpeg[0] == 0xFF, jpeg[1] == 0xD8 else { return nil }
        var offset = 2
        // Walk the markers up to the start of the image data.
        while offset + 4 <= jpeg.count, jpeg[offset] == 0xFF {
            let marker = jpeg[offset + 1]
            if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 { offset += 2; continue }
            if marker == 0xDA || marker == 0xD9 { return nil }
            let length = Int(jpeg[offset + 2]) << 8 | Int(jpeg[offset + 3])
            guard length >= 2, offset + 2 + length <= jpeg.count else { return nil }
            if marker == 0xE1, length >= 16 {
                let segment = Array(jpeg[(offset + 4)..<(offset + 2 + length)])
                if segment.starts(with: Array("Exif".utf8) + [0, 0]) {
                    return tiffOrientation(Array(segment[6...]))
                }
            }
            offset += 2 + length
        }
        return nil
    }

    /// The orientation entry of IFD0 in a TIFF-structured block.
    static func tiffOrientation(_ tiff: [UInt8]) -> Int? {
        guard tiff.count >= 8 else { return nil }
        let little: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= tiff.count else { return nil }
            return little ? Int(tiff[at]) | Int(tiff[at + 1]) << 8 : Int(tiff[at]) << 8 | Int(tiff[at + 1])
        }
        func u32(_ at: Int) -> Int? {
            guard let hi = u16(little ? at + 2 : at), let lo = u16(little ? at : at + 2) else { return nil }
            return hi << 16 | lo
        }
        guard let ifd = u32(4), let count = u16(ifd), count < 1000 else { return nil }
        for entry in 0..<count {
            let at = ifd + 2 + entry * 12
            guard let tag = u16(at) else { return nil }
            if tag == 0x0112, let value = u16(at + 8), (1...8).contains(value) { return value }
        }
        return nil
    }
}
