namespace XCall;

/// <summary>
/// On an assembly: marshals <see cref="Type"/> with <see cref="Marshaller"/>, a class implementing
/// <c>XCall.Marshal.IMarshaller&lt;T&gt;</c> for that type, wherever it appears in the contracts of the
/// assembly. Use it for a type the generator cannot handle, such as a framework or third-party type.
/// Values of the type are copied by value (no reference tracking); the domain transport copies them with
/// the same marshaller.
/// </summary>
/// <example><code>
/// [assembly: XCallMarshaller(typeof(Uri), typeof(UriMarshaller))]
///
/// public abstract class UriMarshaller : IMarshaller&lt;Uri?&gt;
/// {
///     public static void Write(ref MarshalWriter writer, Uri? value) => writer.WriteString(value?.OriginalString);
///     public static Uri? Read(ref MarshalReader reader) => reader.ReadString() is { } s ? new Uri(s, UriKind.RelativeOrAbsolute) : null;
/// }
/// </code></example>
[AttributeUsage(AttributeTargets.Assembly, AllowMultiple = true)]
public sealed class XCallMarshallerAttribute : Attribute
{
    /// <summary>Marshals <paramref name="type"/> with <paramref name="marshaller"/>.</summary>
    public XCallMarshallerAttribute(Type type, Type marshaller)
    {
        Type = type;
        Marshaller = marshaller;
    }

    /// <summary>The marshalled type.</summary>
    public Type Type { get; }

    /// <summary>The class implementing <c>IMarshaller&lt;T&gt;</c> for <see cref="Type"/>.</summary>
    public Type Marshaller { get; }
}
