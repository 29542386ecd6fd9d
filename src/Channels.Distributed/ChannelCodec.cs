using System.Buffers;
using System.Runtime.CompilerServices;
using XCall.Marshal;

namespace XCall.Channels.Distributed;

/// <summary>
/// How a named channel copies its values between processes, through XCall's marshalling. Values of unmanaged
/// types (int, double, structs of them) and strings need nothing: <see cref="Default"/> handles them. For any other
/// type give a codec from <see cref="ChannelCodec.Of{T, TMarshaller}"/>, with the marshaller XCall's generator
/// emitted for it (<c>XCall.Generated.Type_XCallMarshaller</c>, once a [Remotable] interface of your assembly uses
/// the type) or one registered with <c>[assembly: XCallMarshaller]</c>. No type is ever created from a name on the wire.
/// </summary>
public abstract class ChannelCodec<T>
{
    private static ChannelCodec<T>? s_default;

    private protected ChannelCodec()
    {
    }

    /// <summary>The codec for an unmanaged type or string.</summary>
    /// <exception cref="NotSupportedException"><typeparamref name="T"/> is neither; use <see cref="ChannelCodec.Of{T, TMarshaller}"/>.</exception>
    public static ChannelCodec<T> Default => s_default ??= CreateDefault();

    /// <summary>Whether a value travels as one 64-bit word (an unmanaged type of at most eight bytes).</summary>
    internal virtual bool IsWord => false;

    internal virtual long ToWord(T value) => throw new NotSupportedException();

    internal virtual T FromWord(long word) => throw new NotSupportedException();

    /// <summary>Marshals <paramref name="value"/> into a new array.</summary>
    internal abstract byte[] ToBytes(T value);

    /// <summary>Reads a value from <paramref name="bytes"/>, which it must fill exactly.</summary>
    /// <exception cref="XCallProtocolException">The bytes are not a value of the channel's type.</exception>
    internal abstract T FromBytes(byte[] bytes);

    private static ChannelCodec<T> CreateDefault()
    {
        if (!RuntimeHelpers.IsReferenceOrContainsReferences<T>())
        {
            return new BlittableCodec<T>();
        }
        if (typeof(T) == typeof(string))
        {
            return (ChannelCodec<T>)(object)new MarshallerCodec<string?, StringMarshaller>();
        }
        throw new NotSupportedException(
            $"A named channel of {typeof(T).FullName} needs a codec: pass ChannelCodec.Of<{typeof(T).Name}, TMarshaller>() with XCall's generated marshaller for the type.");
    }
}

/// <summary>Codecs for named channels.</summary>
public static class ChannelCodec
{
    /// <summary>The codec that marshals with <typeparamref name="TMarshaller"/>.</summary>
    public static ChannelCodec<T> Of<T, TMarshaller>() where TMarshaller : IMarshaller<T> => new MarshallerCodec<T, TMarshaller>();
}

/// <summary>Unmanaged values: one word when they fit in eight bytes, else their bytes as they are.</summary>
internal sealed class BlittableCodec<T> : ChannelCodec<T>
{
    internal override bool IsWord => Unsafe.SizeOf<T>() <= sizeof(long);

    internal override long ToWord(T value)
    {
        long word = 0;
        Unsafe.WriteUnaligned(ref Unsafe.As<long, byte>(ref word), value);
        return word;
    }

    internal override T FromWord(long word) => Unsafe.ReadUnaligned<T>(ref Unsafe.As<long, byte>(ref word));

    internal override byte[] ToBytes(T value)
    {
        var bytes = new byte[Unsafe.SizeOf<T>()];
        Unsafe.WriteUnaligned(ref bytes[0], value);
        return bytes;
    }

    internal override T FromBytes(byte[] bytes)
    {
        if (bytes.Length != Unsafe.SizeOf<T>())
        {
            throw new XCallProtocolException($"A {typeof(T).FullName} is {Unsafe.SizeOf<T>()} bytes, but {bytes.Length} came.");
        }
        return Unsafe.ReadUnaligned<T>(ref bytes[0]);
    }
}

/// <summary>Values marshalled by an XCall marshaller (generated, registered, or one of XCall.Marshal's).</summary>
internal sealed class MarshallerCodec<T, TMarshaller> : ChannelCodec<T> where TMarshaller : IMarshaller<T>
{
    internal override byte[] ToBytes(T value)
    {
        var output = new ArrayBufferWriter<byte>(64);
        var writer = new MarshalWriter(output);
        TMarshaller.Write(ref writer, value);
        writer.Flush();
        return output.WrittenSpan.ToArray();
    }

    internal override T FromBytes(byte[] bytes)
    {
        var reader = new MarshalReader(bytes);
        T value = TMarshaller.Read(ref reader);
        reader.EnsureFullyConsumed();
        return value;
    }
}
