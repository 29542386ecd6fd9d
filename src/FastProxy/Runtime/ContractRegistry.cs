using System.ComponentModel;
using System.Runtime.CompilerServices;

namespace XCall.Runtime;

/// <summary>Finds the generated <see cref="Contract{T}"/> of an interface; generated module initializers fill it.</summary>
public static class ContractRegistry
{
    /// <summary>Registers a generated contract (called by generated code).</summary>
    [EditorBrowsable(EditorBrowsableState.Never)]
    public static void Register<T>(Contract<T> contract) where T : class => Cache<T>.Value = contract;

    /// <summary>The generated contract of <typeparamref name="T"/>.</summary>
    /// <exception cref="InvalidOperationException"><typeparamref name="T"/> is not a [Remotable] interface compiled with the XCall generator.</exception>
    public static Contract<T> Get<T>() where T : class => Cache<T>.Value ?? Load<T>();

    private static Contract<T> Load<T>() where T : class
    {
        // The generated registration is a module initializer of the interface's assembly; touching the
        // module runs it.
        RuntimeHelpers.RunModuleConstructor(typeof(T).Module.ModuleHandle);
        return Cache<T>.Value ?? throw new InvalidOperationException(
            $"{typeof(T).FullName} has no generated XCall contract: mark it [Remotable] and reference XCall.FastProxy.Generator as an analyzer in its project.");
    }

    private static class Cache<T> where T : class
    {
        public static Contract<T>? Value;
    }
}
