using System.Buffers;
using System.ComponentModel;
using System.Runtime.CompilerServices;
using XCall.Marshal;

namespace XCall.Domain;

/// <summary>
/// How generated domain proxies copy values between load contexts, so no mutable object is shared:
/// unmanaged values and strings pass as they are (immutable), unmanaged arrays are one block copy, data
/// objects without object members are copied member by member, and everything else goes through its
/// marshaller into a thread-local buffer and back, so shared references, cycles, subtypes and deep
/// structures come out exactly as a message would deliver them. [Remotable] objects never cross as they
/// are: wherever they sit, the other side gets a domain proxy (<see cref="DomainLink.Wrap{T}"/>).
/// </summary>
[EditorBrowsable(EditorBrowsableState.Never)]
public static class DomainCopy
{
    [ThreadStatic]
    private static ArrayBufferWriter<byte>? t_buffer;

    /// <summary>
    /// A deep copy of <paramref name="value"/> through its marshaller; a [Remotable] object inside it gets a
    /// domain proxy over <paramref name="link"/>, as an argument of its own would.
    /// </summary>
    public static T Copy<T, TMarshaller>(T value, DomainLink link) where TMarshaller : IMarshaller<T>
    {
        ArrayBufferWriter<byte> buffer = RentBuffer();
        var writer = new MarshalWriter(buffer) { Context = link.BeginCopy() };
        TMarshaller.Write(ref writer, value);
        writer.Flush();
        var reader = new MarshalReader(buffer.WrittenSpan) { Context = writer.Context };
        T copy = TMarshaller.Read(ref reader);
        reader.EnsureFullyConsumed();
        ReturnBuffer(buffer);
        return copy;
    }

    /// <summary>
    /// An empty buffer of this thread, to copy several values through one message (a call's arguments, a
    /// reply's values), so objects they share stay shared in the copy. Give it back with <see cref="ReturnBuffer"/>;
    /// a buffer lost to an exception is simply collected.
    /// </summary>
    public static ArrayBufferWriter<byte> RentBuffer()
    {
        ArrayBufferWriter<byte>? buffer = t_buffer;
        if (buffer is null)
        {
            return new ArrayBufferWriter<byte>(256);
        }
        // A copy nested in this one (user code in a getter or constructor) gets a buffer of its own.
        t_buffer = null;
        buffer.ResetWrittenCount();
        return buffer;
    }

    /// <summary>Gives back a buffer of <see cref="RentBuffer"/>; one grown past 1 MiB is left to the GC.</summary>
    public static void ReturnBuffer(ArrayBufferWriter<byte> buffer)
    {
        if (buffer.Capacity <= 1 << 20)
        {
            t_buffer = buffer;
        }
    }

    /// <summary>A copy of an unmanaged array (one block copy).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static T[]? CopyArray<T>(T[]? value) where T : unmanaged => value is null ? null : value.Length == 0 ? [] : value.AsSpan().ToArray();

    /// <summary>A copy of a list of unmanaged values.</summary>
    public static List<T>? CopyList<T>(List<T>? value) where T : unmanaged => value is null ? null : [.. value];

    /// <summary>An array-backed copy of unmanaged memory.</summary>
    public static ReadOnlyMemory<T> CopyMemory<T>(ReadOnlyMemory<T> value) where T : unmanaged => value.ToArray();

    /// <summary>The exception a domain proxy raises for an exception thrown by the target: what an error frame would carry (type name, message, stack text, string data entries, inner exceptions).</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static Exception ToRemote(Exception exception) => exception switch
    {
        XCallException x when x is not RemoteInvocationException => x,
        _ => Runtime.RemoteError.ToRemote(exception),
    };

    /// <summary>Awaits a task of the target and turns its exception into a <see cref="RemoteInvocationException"/>.</summary>
    public static async Task Wrap(Task task)
    {
        try
        {
            await task.ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is not OperationCanceledException)
        {
            throw ToRemote(ex);
        }
    }

    /// <summary>Awaits a task of the target, copies its result, and turns its exception into a <see cref="RemoteInvocationException"/>.</summary>
    public static async Task<T> Wrap<T>(Task<T> task, Func<T, T>? copy)
    {
        T result;
        try
        {
            result = await task.ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is not OperationCanceledException)
        {
            throw ToRemote(ex);
        }
        return copy is null ? result : copy(result);
    }

    /// <summary>Runs a one-way call (a generated work item that drops its exceptions, as a one-way caller never sees them) on the thread pool.</summary>
    public static void RunOneWay(IThreadPoolWorkItem call) => ThreadPool.UnsafeQueueUserWorkItem(call, preferLocal: false);
}
