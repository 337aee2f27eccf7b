import CLeptonica

/// A point in image pixels (x right, y down).
public struct PixelPoint: Sendable, Equatable {
    public var x: Double
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }
}

extension Pix {
    /// The quadrilateral `corners` (top left, top right, bottom right, bottom left, in this image's pixels)
    /// warped onto an upright `width` × `height` rectangle, with bilinear interpolation; outside is white.
    public func rectified(corners: [PixelPoint], width: Int, height: Int) throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        guard corners.count == 4, width > 0, height > 0 else {
            throw LeptonicaError("rectify", message: "need four corners and a positive size")
        }
        // Leptonica maps destination pixels back to the source, so the coefficients go from dest to source.
        let destination: [PixelPoint] = [
            PixelPoint(x: 0, y: 0), PixelPoint(x: Double(width - 1), y: 0),
            PixelPoint(x: Double(width - 1), y: Double(height - 1)), PixelPoint(x: 0, y: Double(height - 1)),
        ]
        guard let ptas = ptaCreate(4), let ptad = ptaCreate(4) else {
            throw LeptonicaError.captured("ptaCreate", fallback: "out of memory")
        }
        var source = Optional(ptas), dest = Optional(ptad)
        defer {
            ptaDestroy(&source)
            ptaDestroy(&dest)
        }
        for (s, d) in zip(corners, destination) {
            ptaAddPt(ptas, Float(s.x), Float(s.y))
            ptaAddPt(ptad, Float(d.x), Float(d.y))
        }
        var coefficients: UnsafeMutablePointer<Float>?
        guard getProjectiveXformCoeffs(ptad, ptas, &coefficients) == 0, let coefficients else {
            throw LeptonicaError.captured("getProjectiveXformCoeffs", fallback: "degenerate corners")
        }
        defer { lept_free(coefficients) }
        // Warp into a canvas of the output size: pixProjective keeps the source size, so crop afterwards.
        let canvas: Pix
        if self.width >= width && self.height >= height {
            canvas = self
        } else {
            canvas = try Pix.make("pixAddBorderGeneral", pixAddBorderGeneral(
                pointer, 0, Int32(max(0, width - self.width)), 0, Int32(max(0, height - self.height)),
                depth == 32 ? 0xFFFF_FF00 : 255))
        }
        let warped: Pix
        if canvas.depth == 32 {
            warped = try Pix.make("pixProjectiveColor", pixProjectiveColor(canvas.pointer, coefficients, 0xFFFF_FF00))
        } else {
            let gray = try canvas.grayscale()
            warped = try Pix.make("pixProjectiveGray", pixProjectiveGray(gray.pointer, coefficients, 255))
        }
        return try warped.cropped(to: Box(x: 0, y: 0, width: width, height: height))
    }

    /// Turned clockwise by `degrees` about the center with area mapping; the canvas grows so nothing is cut,
    /// and what comes in is white.
    public func rotated(byDegrees degrees: Double) throws(LeptonicaError) -> Pix {
        try rotated(byRadians: degrees * .pi / 180, expand: true)
    }

    /// Mirrored left to right.
    public func flippedHorizontally() throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        return try Pix.make("pixFlipLR", pixFlipLR(nil, pointer))
    }

    /// Mirrored top to bottom.
    public func flippedVertically() throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        return try Pix.make("pixFlipTB", pixFlipTB(nil, pointer))
    }

    /// Turned and mirrored the way an EXIF orientation (1 upright … 8) says the picture is shown; itself for 1 or
    /// an unknown value.
    public func oriented(exif orientation: Int) throws(LeptonicaError) -> Pix {
        switch orientation {
        case 2: return try flippedHorizontally()
        case 3: return try rotatedOrthogonally(quarterTurns: 2)
        case 4: return try flippedVertically()
        case 5: return try rotatedOrthogonally(quarterTurns: 1).flippedHorizontally()
        case 6: return try rotatedOrthogonally(quarterTurns: 1)
        case 7: return try rotatedOrthogonally(quarterTurns: 1).flippedVertically()
        case 8: return try rotatedOrthogonally(quarterTurns: 3)
        default: return self
        }
    }

    /// The skew of text lines in degrees (counter-clockwise positive) within ±`range`, and the confidence;
    /// nil when there is too little text to measure.
    public func skewAngle(range: Double = 15) throws(LeptonicaError) -> (angle: Double, confidence: Double)? {
        LeptonicaLibrary.prepare()
        let binary = try binarized()
        var angle: Float = 0
        var confidence: Float = 0
        let reduction: Int32 = max(binary.width, binary.height) > 2000 ? 4 : 2
        let rc = pixFindSkewSweepAndSearch(binary.pointer, &angle, &confidence, reduction, 1, Float(range), 1, 0.01)
        _ = LeptonicaMessages.take()
        guard rc == 0, confidence > 0 else { return nil }
        return (Double(angle), Double(confidence))
    }

    /// Flattens uneven lighting of a gray image: each pixel divided by a local estimate of the background,
    /// mapping the background to `background` (Leptonica's pixBackgroundNorm).
    public func backgroundNormalized(tile: Int = 64, threshold: Int = 100, minimumCount: Int = 50,
                                     background: Int = 220, smoothing: Int = 2) throws(LeptonicaError) -> Pix
    {
        LeptonicaLibrary.prepare()
        let gray = try grayscale()
        return try Pix.make("pixBackgroundNorm", pixBackgroundNorm(
            gray.pointer, nil, nil, Int32(tile), Int32(tile), Int32(threshold), Int32(minimumCount), Int32(background),
            Int32(smoothing), Int32(smoothing)))
    }

    /// Stretches contrast locally so that each region spans the full range (Leptonica's pixContrastNorm).
    public func contrastNormalized(tile: Int = 100, minimumDifference: Int = 50, smoothing: Int = 2) throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        let gray = try grayscale()
        return try Pix.make("pixContrastNorm", pixContrastNorm(nil, gray.pointer, Int32(tile), Int32(tile),
                                                               Int32(minimumDifference), Int32(smoothing), Int32(smoothing)))
    }

    /// A gamma/levels mapping: `black` and below to 0, `white` and above to 255.
    public func levels(black: Int, white: Int, gamma: Double = 1) throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        let gray = try grayscale()
        return try Pix.make("pixGammaTRC", pixGammaTRC(nil, gray.pointer, Float(gamma), Int32(black), Int32(white)))
    }

    /// Sauvola local binarization: 1 bpp, text black. Leptonica needs the image at least 2·`window`+3 pixels
    /// on each side: a smaller image gets a smaller window, and one too small for any a global threshold.
    public func sauvolaBinarized(window: Int = 8, factor: Double = 0.34) throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        let gray = try grayscale()
        let fitting = min(window, (min(width, height) - 3) / 2)
        guard fitting >= 2 else { return try gray.binarized() }
        var result: UnsafeMutablePointer<PIX>?
        guard pixSauvolaBinarize(gray.pointer, Int32(fitting), Float(factor), 1, nil, nil, nil, &result) == 0 else {
            throw LeptonicaError.captured("pixSauvolaBinarize", fallback: "failed")
        }
        return try Pix.make("pixSauvolaBinarize", result)
    }

    /// Sharpens edges: `fraction` of the difference from a (2·`halfWidth`+1) box blur is added back.
    public func unsharpMasked(halfWidth: Int = 2, fraction: Double = 0.5) throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        return try Pix.make("pixUnsharpMasking", pixUnsharpMasking(pointer, Int32(halfWidth), Float(fraction)))
    }

    /// Grayscale morphological closing (removes dark details narrower than the window, e.g. text).
    public func closedGray(width: Int, height: Int) throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        let gray = try grayscale()
        return try Pix.make("pixCloseGray", pixCloseGray(gray.pointer, Int32(width | 1), Int32(height | 1)))
    }

    /// Grayscale erosion: each pixel becomes the darkest of its window, so dark marks grow by half the window on
    /// each side (the dots of dot-matrix print join into strokes).
    public func erodedGray(width: Int, height: Int) throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        let gray = try grayscale()
        return try Pix.make("pixErodeGray", pixErodeGray(gray.pointer, Int32(width | 1), Int32(height | 1)))
    }

    /// A box blur of (2·`halfWidth`+1) × (2·`halfHeight`+1).
    public func blurred(halfWidth: Int, halfHeight: Int) throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        return try Pix.make("pixBlockconv", pixBlockconv(pointer, Int32(halfWidth), Int32(halfHeight)))
    }

    /// A gray image from color: the darkest of the three channels per pixel (keeps colored ink dark).
    public func minimumChannel() throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        guard depth == 32 else { return try grayscale() }
        return try Pix.make("pixConvertRGBToGrayMinMax", pixConvertRGBToGrayMinMax(pointer, Int32(L_CHOOSE_MIN)))
    }

    /// Draws a line in place (the only drawing operation; used for diagnostic images).
    public func drawLine(from a: PixelPoint, to b: PixelPoint, width: Int, red: UInt8, green: UInt8, blue: UInt8) {
        LeptonicaLibrary.prepare()
        pixRenderLineArb(pointer, Int32(a.x.rounded()), Int32(a.y.rounded()), Int32(b.x.rounded()), Int32(b.y.rounded()),
                         Int32(width), red, green, blue)
    }
}

extension Pix {
    /// One channel of a 32-bit image as 8-bit gray: 1 red, 2 green, 3 blue.
    public func rgbComponent(_ index: Int) throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        let color = try rgb()
        let component: Int32
        switch index {
        case 1: component = Int32(COLOR_RED)
        case 2: component = Int32(COLOR_GREEN)
        default: component = Int32(COLOR_BLUE)
        }
        return try Pix.make("pixGetRGBComponent", pixGetRGBComponent(color.pointer, component))
    }
}

extension Pix {
    /// Gray by luminance (0.3 R + 0.59 G + 0.11 B) for color images; the image itself otherwise.
    public func luminance() throws(LeptonicaError) -> Pix {
        LeptonicaLibrary.prepare()
        guard depth == 32 else { return try grayscale() }
        return try Pix.make("pixConvertRGBToLuminance", pixConvertRGBToLuminance(pointer))
    }
}

extension Pix {
    /// Which way Latin-like text is turned, judged from the shapes of letters (ascenders above the x-height are
    /// commoner than descenders below it): Leptonica's pixOrientDetect on a binarized copy. `up` > 0 says the text
    /// is upright, < 0 upside down; `left` > 0 says it is turned 90° counter-clockwise, < 0 clockwise. Magnitudes
    /// above about 8 are decisive; meaningless for scripts without ascenders (Devanagari, Chinese).
    public func textOrientationEvidence() throws(LeptonicaError) -> (up: Double, left: Double) {
        LeptonicaLibrary.prepare()
        let binary = try binarized()
        var up: Float = 0
        var left: Float = 0
        let rc = pixOrientDetect(binary.pointer, &up, &left, 0, 0)
        _ = LeptonicaMessages.take()
        guard rc == 0 else { throw LeptonicaError("pixOrientDetect", message: "too little text") }
        return (Double(up), Double(left))
    }
}
