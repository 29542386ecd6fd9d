using XCall.Marshal;

[assembly: XCall.XCallMarshaller(typeof(System.Uri), typeof(XCall.Tests.Contracts.UriMarshaller))]

namespace XCall.Tests.Contracts;

/// <summary>A user marshaller for a framework type the generator does not handle: the original string.</summary>
public abstract class UriMarshaller : IMarshaller<Uri?>
{
    public static void Write(ref MarshalWriter writer, Uri? value) => writer.WriteString(value?.OriginalString);

    public static Uri? Read(ref MarshalReader reader) =>
        reader.ReadString() is { } text ? new Uri(text, UriKind.RelativeOrAbsolute) : null;
}
