namespace XCall.Marshal;

/// <summary>A string: UTF-16 length and code units; null distinct from empty.</summary>
public abstract class StringMarshaller : IMarshaller<string?>
{
    /// <inheritdoc/>
    public static void Write(ref MarshalWriter writer, string? value) => writer.WriteString(value);

    /// <inheritdoc/>
    public static string? Read(ref MarshalReader reader) => reader.ReadString();
}
