import FarmCore
import FarmRuntime
import FarmStore
import FarmWeb

/// `ocrfarm token`: API tokens for `serve`.
struct TokenCommand: Command {
    static let name = "token"
    static let abstract = "Create, list or revoke API tokens for `ocrfarm serve` (stored hashed)."
    static let arguments = "create|list|revoke [ID|NAME]"
    static let options: [OptionSpec] = [
        StoreOption.spec,
        OptionSpec("--role", value: "read|admin", "create: what the token may do (default: read)."),
        OptionSpec("--name", value: "NAME", "create: a name to list and revoke it by (default: token-N)."),
    ]
    static let discussion = """
    create prints the new token once, on its own line; only its SHA-256 is stored, so it cannot be shown again.
    A read token answers every GET; an admin token also submits, requeues and deletes. Send it as
    `Authorization: Bearer TOKEN`. list shows id, name, role, created and revoked times; revoke ID|NAME revokes.

    Exit status: 0; 64 bad usage; 66 no store, or no such token to revoke.
    """

    enum Action { case create(TokenRole, String?), list, revoke(String) }
    let storePath: String
    let action: Action

    init(_ arguments: ParsedArguments) throws(UsageError) {
        storePath = StoreOption.path(arguments)
        let words = arguments.positionals
        switch words.first {
        case "create":
            guard words.count == 1 else { throw UsageError(message: "token create takes no more arguments") }
            let roleText = arguments.string("--role") ?? "read"
            guard let role = TokenRole(rawValue: roleText) else { throw UsageError(message: "--role is read or admin, not '\(roleText)'") }
            action = .create(role, arguments.string("--name"))
        case "list":
            guard words.count == 1 else { throw UsageError(message: "token list takes no more arguments") }
            action = .list
        case "revoke":
            guard words.count == 2 else { throw UsageError(message: "token revoke takes the token's id or name") }
            action = .revoke(words[1])
        default:
            throw UsageError(message: "token takes create, list or revoke")
        }
    }

    func run() throws -> ExitStatus {
        switch action {
        case .create(let role, let name):
            let store = try Store(path: storePath)
            let count = try Tokens.list(in: store).count
            let (token, record) = try Tokens.create(in: store, role: role, name: name ?? "token-\(count + 1)")
            Console.error("created \(record.role.rawValue) token \(record.id) '\(Printable.text(record.name))'; it is shown only now:\n")
            Console.out(token + "\n")
        case .list:
            let store = try Store(path: storePath, readOnly: true)
            var out = "ID  NAME  ROLE  CREATED  REVOKED\n"
            for token in try Tokens.list(in: store) {
                out += "\(token.id)  \(Printable.text(token.name))  \(token.role.rawValue)  \(Clock.iso8601(token.createdAt))  "
                out += (token.revokedAt.map { Clock.iso8601($0) } ?? "-") + "\n"
            }
            Console.out(out)
        case .revoke(let which):
            let store = try Store(path: storePath)
            let revoked = try Tokens.revoke(which, in: store)
            guard revoked > 0 else { throw CommandFailure(.noInput, "no live token with id or name '\(Printable.text(which))'") }
            Console.out("revoked \(revoked) token\(revoked == 1 ? "" : "s")\n")
        }
        return .success
    }
}
