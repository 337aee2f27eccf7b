/// What names the files of pages carry.
public enum PageFiles {
    /// File name endings of the images and PDFs ocrfarm reads (compared in lower case, without the dot).
    public static let endings: Set<String> = [
        "pdf", "png", "jpg", "jpeg", "jpe", "jfif", "tif", "tiff", "pnm", "pbm", "pgm", "ppm", "bmp", "gif", "jp2", "j2k",
        "jpx", "webp",
    ]
}
