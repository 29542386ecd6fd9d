using XCall.Transport.Shm.Interop;

namespace XCall.Transport.Shm.Rendezvous;

/// <summary>The per-user directory of rendezvous sockets: created 0700, and trusted only if we own it.</summary>
internal static class RuntimeDirectory
{
    private const UnixFileMode Private = UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute;

    /// <summary>Creates the directory if needed and checks that it is ours (or an allowed uid's) and 0700.</summary>
    public static void Ensure(ShmOptions options)
    {
        string path = options.RuntimeDirectory;
        if (OperatingSystem.IsWindows())
        {
            Directory.CreateDirectory(path);
            return;
        }
        if (!Directory.Exists(path))
        {
            Directory.CreateDirectory(path, Private);
        }
        if (!Libc.TryGetOwnerAndMode(path, out uint owner, out uint mode))
        {
            File.SetUnixFileMode(path, Private);
            return;
        }
        if ((mode & 0xF000) != 0x4000)
        {
            throw new UnauthorizedAccessException($"The XCall runtime directory {path} is not a directory (a symbolic link?).");
        }
        if (owner != Libc.EffectiveUid && !options.IsAllowed(owner))
        {
            throw new UnauthorizedAccessException($"The XCall runtime directory {path} belongs to uid {owner}, not to this user (uid {Libc.EffectiveUid}).");
        }
        if ((mode & 0x1FF) != 0x1C0)
        {
            if (owner != Libc.EffectiveUid)
            {
                throw new UnauthorizedAccessException($"The XCall runtime directory {path} has mode {Convert.ToString(mode & 0x1FF, 8)}, not 700.");
            }
            File.SetUnixFileMode(path, Private);
        }
    }

    /// <summary>The socket path of <paramref name="name"/>.</summary>
    public static string SocketPath(ShmOptions options, string name) => Path.Combine(options.RuntimeDirectory, name + ".sock");

    /// <summary>Checks a service name: a plain file name, short enough for a Unix socket path.</summary>
    public static void ValidateName(string name, ShmOptions options)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        if (name.IndexOfAny(['/', '\0']) >= 0 || name is "." or "..")
        {
            throw new ArgumentException($"'{name}' is not a valid shm service name (no '/', not '.' or '..').", nameof(name));
        }
        string path = SocketPath(options, name);
        if (System.Text.Encoding.UTF8.GetByteCount(path) > 107)
        {
            throw new ArgumentException($"The socket path {path} is longer than the 107 bytes a Unix socket address holds; use a shorter name or RuntimeDirectory.", nameof(name));
        }
    }
}
