namespace XCall.Marshal;

/// <summary>
/// A marshaller registered by the user for a type the generator cannot handle
/// (<c>[assembly: XCallMarshaller(typeof(T), typeof(TMarshaller))]</c>). Reading keeps the reader's
/// promise: whatever the user's code raises on malformed bytes surfaces as <see cref="XCallProtocolException"/>.
/// </summary>
public abstract class RegisteredMarshaller<T, TMarshaller> : IMarshaller<T> where TMarshaller : IMarshaller<T>
{
    /// <inheritdoc/>
    public static void Write(ref MarshalWriter writer, T value) => TMarshaller.Write(ref writer, value);

    /// <inheritdoc/>
    public static T Read(ref MarshalReader reader)
    {
        try
        {
            return TMarshaller.Read(ref reader);
        }
        catch (Exception e) when (e is not XCallException)
        {
            throw new XCallProtocolException($"{typeof(TMarshaller).FullName} could not read a {typeof(T).FullName}: {e.Message}", e);
        }
    }
}
