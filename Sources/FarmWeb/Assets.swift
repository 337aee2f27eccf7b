/// The dashboard and viewer's files, kept as files in Web/ (index.html, app.js, app.css, favicon.svg) and compiled
/// into the binary by SwiftPM (`resources: [.embedInCode("Web")]` generates `PackageResources`, one byte array per
/// file): nothing read or fetched at run time. They are served as separate files from /ui/ so the
/// Content-Security-Policy ("default-src 'self'") can forbid any inline script or style. Scripts/lint-web checks
/// them (ESLint, HTML Tidy).
enum Assets {
    /// The file served for a /ui/ name, as its bytes, with its type; nil for any other name (nothing here maps a
    /// name to a path).
    static func file(_ name: String) -> (body: [UInt8], type: String)? {
        switch name {
        // The tab's icon: a page with lines of text on the header's colour (an SVG, so one file serves every size).
        case "favicon.svg": (PackageResources.favicon_svg, "image/svg+xml")
        case "app.js": (PackageResources.app_js, "text/javascript; charset=utf-8")
        // The style sheet (a file, not inline style: the CSP allows no 'unsafe-inline').
        case "app.css": (PackageResources.app_css, "text/css; charset=utf-8")
        // The one HTML page: the dashboard and the viewer are views of it, picked by the URL's #fragment.
        case "index.html": (PackageResources.index_html, "text/html; charset=utf-8")
        default: nil
        }
    }
}
