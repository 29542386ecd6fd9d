using XCall.Marshal;

[assembly: XCall.XCallMarshaller(typeof(System.Uri), typeof(XCall.Tests.Contracts.UriMarshaller))]

namespace XCall.Tests.Contracts;

/// <summary>A user marshaller for a framework type the generator does not handle: the original string.</summary>
public abstract class UriMarshaller : IMarshaller<Uri?>
{
    public static void Write(ref MarshalWriter writer, Uri? value) => writer.WriteString(value?.OriginalString);

    [ThreadStatic]
    private static Type? t_lastReadContext;

    /// <summary>The type of <see cref="MarshalReader.Context"/> the last read on this thread saw (tests check it is the connection).</summary>
    public static Type? LastReadContext => t_lastReadContext;

    public static Uri? Read(ref MarshalReader reader)
    {
        t_lastReadContext = reader.Context?.GetType();
        return reader.ReadString() is { } text ? new Uri(text, UriKind.RelativeOrAbsolute) : null;
    }
}
