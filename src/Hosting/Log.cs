using Microsoft.Extensions.Logging;

namespace XCall.Hosting;

/// <summary>XCall's connection events, logged under the category <c>XCall.Hosting</c> (event ids stable).</summary>
internal static partial class Log
{
    public const string Category = "XCall.Hosting";

    [LoggerMessage(EventId = 1, Level = LogLevel.Information, Message = "Connected to {Contract} at {Address} over {Transport}")]
    public static partial void Connected(ILogger logger, string contract, string address, string transport);

    [LoggerMessage(EventId = 2, Level = LogLevel.Warning, Message = "Lost the link to {Contract} at {Address}; reconnecting on the next call")]
    public static partial void Reconnecting(ILogger logger, string contract, string address, Exception? error);

    [LoggerMessage(EventId = 3, Level = LogLevel.Information, Message = "Reconnected to {Contract} at {Address}")]
    public static partial void Reconnected(ILogger logger, string contract, string address);

    [LoggerMessage(EventId = 4, Level = LogLevel.Warning, Message = "Lost the link to {Contract} at {Address} for good")]
    public static partial void Lost(ILogger logger, string contract, string address, Exception? error);

    [LoggerMessage(EventId = 5, Level = LogLevel.Error, Message = "The server at {Address} refused {Contract}: {Reason}")]
    public static partial void PeerRefused(ILogger logger, string contract, string address, string reason, Exception error);

    [LoggerMessage(EventId = 6, Level = LogLevel.Error, Message = "Protocol error on the link to {Contract} at {Address}")]
    public static partial void ProtocolError(ILogger logger, string contract, string address, Exception error);

    [LoggerMessage(EventId = 7, Level = LogLevel.Error, Message = "Could not connect to {Contract} at {Address}")]
    public static partial void ConnectFailed(ILogger logger, string contract, string address, Exception error);

    [LoggerMessage(EventId = 10, Level = LogLevel.Information, Message = "Serving at {Address}")]
    public static partial void Serving(ILogger logger, string address);

    [LoggerMessage(EventId = 11, Level = LogLevel.Information, Message = "Stopped accepting; refusing new calls, draining {Calls} call(s) in flight on {Connections} connection(s)")]
    public static partial void Draining(ILogger logger, int calls, int connections);

    [LoggerMessage(EventId = 12, Level = LogLevel.Information, Message = "Drained: every call in flight answered; closing {Connections} connection(s)")]
    public static partial void Drained(ILogger logger, int connections);

    [LoggerMessage(EventId = 13, Level = LogLevel.Warning, Message = "Shutdown timeout: closing {Connections} connection(s) with {Calls} call(s) still in flight")]
    public static partial void DrainCutShort(ILogger logger, int calls, int connections);
}
