import CLeptonica

extension Pix {
    /// 8-bit grayscale (colormaps removed, RGB by luminance, 1 bpp expanded, 16 bpp by the high byte).
    public func grayscale() throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        if depth == 8 && !hasColormap { return try Pix.make("pixClone", pixClone(pointer)) }
        if depth == 16 { return try Pix.make("pixConvert16To8", pixConvert16To8(pointer, Int32(L_MS_BYTE))) }
        if depth == 32 {
            let opaque = try removingAlpha()
            return try Pix.make("pixConvertRGBToLuminance", pixConvertRGBToLuminance(opaque.pointer))
        }
        return try Pix.make("pixConvertTo8", pixConvertTo8(pointer, 0))
    }

    /// 32-bit RGB (alpha blended onto white, colormaps and gray expanded).
    public func rgb() throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        if depth == 32 { return try removingAlpha() }
        if depth == 16 { return try grayscale().rgb() }
        return try Pix.make("pixConvertTo32", pixConvertTo32(pointer))
    }

    /// The image without its colormap, in the depth its colors need.
    public func removingColormap() throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        guard hasColormap else { return try Pix.make("pixClone", pixClone(pointer)) }
        return try Pix.make("pixRemoveColormap", pixRemoveColormap(pointer, Int32(REMOVE_CMAP_BASED_ON_SRC)))
    }

    /// A 32-bit image with any alpha channel blended onto a white background (samples per pixel becomes 3).
    public func removingAlpha() throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        guard depth == 32, samplesPerPixel == 4 else { return try Pix.make("pixClone", pixClone(pointer)) }
        let result = try Pix.make("pixAlphaBlendUniform", pixAlphaBlendUniform(pointer, 0xFFFF_FF00))
        pixSetSpp(result.pointer, 3)
        return result
    }

    /// A 1-bpp image: pixels darker than `threshold` (of 256) become black (1).
    public func binarized(threshold: Int = 128) throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        if depth == 1 { return try Pix.make("pixClone", pixClone(pointer)) }
        let gray = try grayscale()
        return try Pix.make("pixThresholdToBinary", pixThresholdToBinary(gray.pointer, Int32(threshold)))
    }

    /// The part of the image inside `box` (clipped to the image).
    public func cropped(to box: Box) throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        guard let clip = boxCreate(Int32(box.x), Int32(box.y), Int32(box.width), Int32(box.height)) else {
            throw LeptonicaError.captured("boxCreate", fallback: "bad box \(box)")
        }
        var reference: UnsafeMutablePointer<BOX>? = clip
        defer { boxDestroy(&reference) }
        return try Pix.make("pixClipRectangle", pixClipRectangle(pointer, clip, nil))
    }

    /// Turned clockwise by `quarterTurns` × 90°.
    public func rotatedOrthogonally(quarterTurns: Int) throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        let turns = ((quarterTurns % 4) + 4) % 4
        if turns == 0 { return try Pix.make("pixClone", pixClone(pointer)) }
        return try Pix.make("pixRotateOrth", pixRotateOrth(pointer, Int32(turns)))
    }

    /// Rotated clockwise by `radians` about the center, with white brought in. With `expand`, the canvas grows so
    /// no corner is cut; otherwise the size stays the same.
    public func rotated(byRadians radians: Double, expand: Bool = false) throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        let w: Int32 = expand ? Int32(width) : 0
        let h: Int32 = expand ? Int32(height) : 0
        let type = depth == 1 ? Int32(L_ROTATE_SHEAR) : Int32(L_ROTATE_AREA_MAP)
        return try Pix.make("pixRotate", pixRotate(pointer, Float(radians), type, Int32(L_BRING_IN_WHITE), w, h))
    }

    /// Scaled by the factors (anti-aliased when shrinking).
    public func scaled(x: Double, y: Double) throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        return try Pix.make("pixScale", pixScale(pointer, Float(x), Float(y)))
    }

    public func scaled(by factor: Double) throws(LeptonicaError) -> Pix { try scaled(x: factor, y: factor) }

    /// The image scaled by point sampling: each pixel is one pixel of the original, not an average, so a thin dark
    /// stroke stays as dark as it was (what a count of dark pixels needs).
    public func sampled(by factor: Double) throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        return try Pix.make("pixScaleBySampling", pixScaleBySampling(pointer, Float(factor), Float(factor)))
    }

    /// Scaled by `factor` without the unsharp mask Leptonica adds between 0.7× and 1.4× (it costs as much as the
    /// scaling itself).
    public func resampled(by factor: Double) throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        return try Pix.make("pixScaleGeneral", pixScaleGeneral(pointer, Float(factor), Float(factor), 0, 0))
    }

    /// Scaled to exactly `width` × `height`.
    public func scaled(toWidth width: Int, height: Int) throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        return try Pix.make("pixScaleToSize", pixScaleToSize(pointer, Int32(width), Int32(height)))
    }

    /// Finds the skew of text lines and returns the image turned straight, the angle found in degrees
    /// (counter-clockwise positive, as Leptonica reports it) and the confidence of the measurement.
    /// When the confidence is too low to act on, the image comes back unrotated and `angle` is 0.
    public func deskewed() throws(LeptonicaError) -> (image: Pix, angle: Double, confidence: Double) {
        LeptonicaLibrary.prepare()
        var angle: Float = 0
        var confidence: Float = 0
        let result = try Pix.make("pixFindSkewAndDeskew", pixFindSkewAndDeskew(pointer, 0, &angle, &confidence))
        _ = LeptonicaMessages.take()
        return (result, Double(angle), Double(confidence))
    }
}

extension Pix {
    /// The bounding boxes of the 8-connected foreground components of a 1-bit image, after each foreground pixel
    /// is grown into a `width` × `height` brick (joining glyphs into words and lines).
    public func componentBoxes(grownBy width: Int, _ height: Int) throws(LeptonicaError) -> [Box] {
        LeptonicaLibrary.prepare()
        guard depth == 1 else { throw LeptonicaError("componentBoxes", message: "needs a 1-bit image, not \(depth)-bit") }
        let grown = try Pix.make("pixDilateBrick", pixDilateBrick(nil, pointer, Int32(max(1, width)), Int32(max(1, height))))
        return try grown.connectedComponentBoxes()
    }

    /// The bounding boxes of the 8-connected foreground components of this 1-bit image.
    func connectedComponentBoxes() throws(LeptonicaError) -> [Box] {
        var boxes: UnsafeMutablePointer<BOXA>? = pixConnCompBB(self.pointer, 8)
        guard boxes != nil else { throw LeptonicaError.captured("pixConnCompBB", fallback: "cannot find components") }
        defer { boxaDestroy(&boxes) }
        return (0..<boxaGetCount(boxes)).compactMap { index in
            var x: Int32 = 0, y: Int32 = 0, w: Int32 = 0, h: Int32 = 0
            guard boxaGetBoxGeometry(boxes, index, &x, &y, &w, &h) == 0 else { return nil }
            return Box(x: Int(x), y: Int(y), width: Int(w), height: Int(h))
        }
    }

    /// A copy of an 8-bit image with the given rectangles painted white.
    public func whitened(_ boxes: [Box]) throws(LeptonicaError) -> Pix {
        let copy = try grayscale().copy()
        for box in boxes {
            var rect: UnsafeMutablePointer<BOX>? = boxCreate(Int32(box.x), Int32(box.y), Int32(box.width), Int32(box.height))
            guard rect != nil else { continue }
            pixSetInRectArbitrary(copy.pointer, rect, 255)
            boxDestroy(&rect)
        }
        return copy
    }
}
