import CZeroMQ

/// The kind of a socket.
public struct SocketType: Sendable, Equatable {
    public let rawValue: Int32
    public static let pair = SocketType(rawValue: ZMQ_PAIR)
    public static let publisher = SocketType(rawValue: ZMQ_PUB)
    public static let subscriber = SocketType(rawValue: ZMQ_SUB)
    public static let request = SocketType(rawValue: ZMQ_REQ)
    public static let reply = SocketType(rawValue: ZMQ_REP)
    public static let dealer = SocketType(rawValue: ZMQ_DEALER)
    public static let router = SocketType(rawValue: ZMQ_ROUTER)
    public static let pull = SocketType(rawValue: ZMQ_PULL)
    public static let push = SocketType(rawValue: ZMQ_PUSH)
}

/// A socket option whose value has type `Value`: `socket.set(.linger, 0)`.
public struct SocketOption<Value>: Sendable {
    public let code: Int32
    public init(code: Int32) { self.code = code }
}

extension SocketOption where Value == Int32 {
    /// Milliseconds that pending outgoing messages survive `close()`; 0 drops them at once.
    public static var linger: Self { .init(code: ZMQ_LINGER) }
    public static var sendHighWaterMark: Self { .init(code: ZMQ_SNDHWM) }
    public static var receiveHighWaterMark: Self { .init(code: ZMQ_RCVHWM) }
    public static var sendTimeout: Self { .init(code: ZMQ_SNDTIMEO) }
    public static var receiveTimeout: Self { .init(code: ZMQ_RCVTIMEO) }
    /// ZMTP heartbeat (PING) interval in milliseconds; 0 disables.
    public static var heartbeatInterval: Self { .init(code: ZMQ_HEARTBEAT_IVL) }
    /// Milliseconds without traffic after a PING before the connection is closed.
    public static var heartbeatTimeout: Self { .init(code: ZMQ_HEARTBEAT_TIMEOUT) }
    /// Milliseconds the peer should wait for traffic from us before it drops the connection.
    public static var heartbeatTTL: Self { .init(code: ZMQ_HEARTBEAT_TTL) }
    public static var reconnectInterval: Self { .init(code: ZMQ_RECONNECT_IVL) }
    public static var reconnectIntervalMax: Self { .init(code: ZMQ_RECONNECT_IVL_MAX) }
    public static var handshakeInterval: Self { .init(code: ZMQ_HANDSHAKE_IVL) }
    public static var connectTimeout: Self { .init(code: ZMQ_CONNECT_TIMEOUT) }
    public static var backlog: Self { .init(code: ZMQ_BACKLOG) }
    public static var tcpKeepalive: Self { .init(code: ZMQ_TCP_KEEPALIVE) }
    public static var events: Self { .init(code: ZMQ_EVENTS) }
    public static var type: Self { .init(code: ZMQ_TYPE) }
    /// The security mechanism in force: 0 null, 1 plain, 2 curve.
    public static var mechanism: Self { .init(code: ZMQ_MECHANISM) }
}

extension SocketOption where Value == Int64 {
    /// Largest inbound message in bytes (-1: no limit). Peers sending more are disconnected.
    public static var maxMessageSize: Self { .init(code: ZMQ_MAXMSGSIZE) }
}

extension SocketOption where Value == Bool {
    /// ROUTER: fail with `EHOSTUNREACH` instead of silently dropping messages to unknown peers.
    public static var routerMandatory: Self { .init(code: ZMQ_ROUTER_MANDATORY) }
    /// ROUTER: a new connection with a known routing id takes it over.
    public static var routerHandover: Self { .init(code: ZMQ_ROUTER_HANDOVER) }
    /// Queue messages only to completed connections.
    public static var immediate: Self { .init(code: ZMQ_IMMEDIATE) }
    public static var ipv6: Self { .init(code: ZMQ_IPV6) }
    /// This socket is the CURVE server.
    public static var curveServer: Self { .init(code: ZMQ_CURVE_SERVER) }
    public static var receiveMore: Self { .init(code: ZMQ_RCVMORE) }
}

extension SocketOption where Value == String {
    /// The endpoint last bound or connected, with the port the system chose for `tcp://…:*`.
    public static var lastEndpoint: Self { .init(code: ZMQ_LAST_ENDPOINT) }
    /// Z85 text (40 characters) of a CURVE key.
    public static var curvePublicKey: Self { .init(code: ZMQ_CURVE_PUBLICKEY) }
    public static var curveSecretKey: Self { .init(code: ZMQ_CURVE_SECRETKEY) }
    public static var curveServerKey: Self { .init(code: ZMQ_CURVE_SERVERKEY) }
    public static var zapDomain: Self { .init(code: ZMQ_ZAP_DOMAIN) }
}

extension SocketOption where Value == [UInt8] {
    /// The identity a DEALER presents to a ROUTER (1–255 bytes).
    public static var routingID: Self { .init(code: ZMQ_ROUTING_ID) }
    public static var subscribe: Self { .init(code: ZMQ_SUBSCRIBE) }
    public static var unsubscribe: Self { .init(code: ZMQ_UNSUBSCRIBE) }
}
