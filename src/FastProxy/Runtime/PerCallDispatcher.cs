using XCall.Marshal;
using XCall.Runtime.CompilerServices;

namespace XCall.Runtime;

/// <summary>
/// Per-call activation: each call gets a new instance from the factory, which is disposed (when it is
/// <see cref="IDisposable"/>) once the call, or its task, ends.
/// </summary>
internal sealed class PerCallDispatcher<T>(Func<T> factory, Dispatcher inner) : Dispatcher where T : class
{
    public override string ContractName => inner.ContractName;

    public override ulong ContractHash => inner.ContractHash;

    public override string GetMethodName(uint methodId) => inner.GetMethodName(methodId);

    public override ValueTask Dispatch(object target, uint methodId, ref MarshalReader args, ServerCall call)
    {
        T instance = factory() ?? throw new InvalidOperationException($"The per-call factory of {inner.ContractName} returned null.");
        ValueTask pending;
        try
        {
            pending = inner.Dispatch(instance, methodId, ref args, call);
        }
        catch
        {
            (instance as IDisposable)?.Dispose();
            throw;
        }
        if (pending.IsCompleted)
        {
            (instance as IDisposable)?.Dispose();
            return pending;
        }
        return DisposeAfter(pending, instance);
    }

    private static async ValueTask DisposeAfter(ValueTask pending, T instance)
    {
        try
        {
            await pending.ConfigureAwait(false);
        }
        finally
        {
            (instance as IDisposable)?.Dispose();
        }
    }
}
