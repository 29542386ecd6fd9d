namespace XCall.Marshal;

/// <summary>
/// Writes and reads one type. The generator emits an implementation per data type and composes
/// the built-in ones for collections, so every call is bound at compile time: no reflection, AOT-safe.
/// </summary>
/// <typeparam name="T">The marshalled type.</typeparam>
public interface IMarshaller<T>
{
    /// <summary>Writes <paramref name="value"/>.</summary>
    static abstract void Write(ref MarshalWriter writer, T value);

    /// <summary>Reads a value written by <see cref="Write"/>.</summary>
    static abstract T Read(ref MarshalReader reader);
}
