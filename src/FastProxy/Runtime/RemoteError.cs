using XCall.Marshal;

namespace XCall.Runtime;

/// <summary>Writes and reads the payload of an <see cref="Transport.FrameKind.Error"/> frame: type name, message, stack text.</summary>
internal static class RemoteError
{
    public static void Write(ref MarshalWriter writer, Exception exception)
    {
        Exception reported = exception is RemoteInvocationException { } remote ? remote : exception;
        writer.WriteString(reported is RemoteInvocationException r ? r.RemoteTypeName : reported.GetType().FullName ?? reported.GetType().Name);
        writer.WriteString(reported is RemoteInvocationException r2 ? r2.RemoteMessage : reported.Message);
        writer.WriteString(reported.StackTrace);
    }

    public static RemoteInvocationException Read(ref MarshalReader reader)
    {
        string type = reader.ReadString() ?? "<unknown>";
        string message = reader.ReadString() ?? string.Empty;
        string? stack = reader.ReadString();
        return new RemoteInvocationException(type, message, stack);
    }
}
