//! Thin wrappers over the Linux calls the emulator needs: TUN devices (Documentation/
//! networking/tuntap.rst), setns(2), epoll(7), timerfd_create(2), CLOCK_MONOTONIC and the
//! thread's scheduling class.
//! Every descriptor is an OwnedFd, so each is closed on every path out, and a TUN device,
//! which is not persistent, disappears with its last descriptor.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

fn open(path: &str, flags: libc::c_int) -> io::Result<OwnedFd> {
    let c = CString::new(path).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let fd = check(unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC) })?;
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Nanoseconds of CLOCK_MONOTONIC: never stepped by NTP, shared by every network namespace.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CPU time this thread has used, ns.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

// <linux/if_tun.h>
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;
const IFF_VNET_HDR: libc::c_short = 0x4000;
const TUNSETIFF: libc::c_ulong = 0x4004_54ca; // _IOW('T', 202, int)
const TUNSETOFFLOAD: libc::c_ulong = 0x4004_54d0; // _IOW('T', 208, unsigned int)
const TUN_F_CSUM: libc::c_ulong = 0x01;
const TUN_F_TSO4: libc::c_ulong = 0x02;
const TUN_F_TSO_ECN: libc::c_ulong = 0x08;

#[repr(C)]
struct IfReq {
    name: [libc::c_char; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Runs `f` with this thread in the network namespace at `netns_path`, then returns the
/// thread to the namespace it was in. A TUN device belongs to the namespace the opening
/// thread was in when it opened /dev/net/tun.
pub fn in_netns<T>(netns_path: &str, f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    let original = open("/proc/thread-self/ns/net", libc::O_RDONLY)?;
    let target = open(netns_path, libc::O_RDONLY)?;
    check(unsafe { libc::setns(target.as_raw_fd(), libc::CLONE_NEWNET) })?;
    let result = f();
    // Failing to return would leave this thread, and the Python thread it belongs to, in
    // the emulated namespace: that must not pass silently.
    check(unsafe { libc::setns(original.as_raw_fd(), libc::CLONE_NEWNET) })
        .expect("cannot return to the original network namespace");
    result
}

/// Opens a non-blocking TUN device `name` without the 4-byte packet-information header and
/// with a virtio-net header (crate::vnet), so each read or write is that header and one IP
/// packet. The device offers checksum and TCP/IPv4 segmentation offload (with ECN's CWR):
/// the kernel leaves checksums partial and hands its TCP GSO buffers over whole, as
/// super-packets, instead of segmenting them itself; crate::tso cuts them.
pub fn open_tun(name: &str) -> io::Result<OwnedFd> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("TUN name {name:?} must be 1 to 15 bytes"),
        ));
    }
    let fd = open("/dev/net/tun", libc::O_RDWR | libc::O_NONBLOCK)?;
    let mut req = IfReq {
        name: [0; libc::IFNAMSIZ],
        flags: IFF_TUN | IFF_NO_PI | IFF_VNET_HDR,
        _pad: [0; 22],
    };
    for (dst, src) in req.name.iter_mut().zip(name.bytes()) {
        *dst = src as libc::c_char;
    }
    check(unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF, &mut req) })?;
    let offloads = TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO_ECN;
    check(unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETOFFLOAD, offloads) })?;
    Ok(fd)
}

/// read(2) into `buf`; Ok(None) when nothing is waiting.
pub fn read(fd: RawFd, buf: &mut [u8]) -> io::Result<Option<usize>> {
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n >= 0 {
        return Ok(Some(n as usize));
    }
    let e = io::Error::last_os_error();
    if e.kind() == io::ErrorKind::WouldBlock {
        Ok(None)
    } else {
        Err(e)
    }
}

pub fn write(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// How near a deadline must be for `Epoll::wait_until` to poll for it instead of sleeping.
pub const SPIN_NS: u64 = 50_000;

pub struct Epoll(OwnedFd);

impl Epoll {
    pub fn new() -> io::Result<Self> {
        let fd = check(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        Ok(Self(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    pub fn add(&self, fd: RawFd, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: token,
        };
        check(unsafe { libc::epoll_ctl(self.0.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) })?;
        Ok(())
    }

    pub fn remove(&self, fd: RawFd) -> io::Result<()> {
        let mut ev = libc::epoll_event { events: 0, u64: 0 };
        check(unsafe { libc::epoll_ctl(self.0.as_raw_fd(), libc::EPOLL_CTL_DEL, fd, &mut ev) })?;
        Ok(())
    }

    /// Returns the ready tokens, or none once `deadline_ns` has come. A deadline more than
    /// [`SPIN_NS`] away is waited for asleep, the caller's timerfd armed for it; a nearer
    /// one by polling (epoll_wait without blocking) until it comes: in a virtual machine a
    /// timerfd that is armed and fires costs about 10 µs of CPU (its hrtimer programmed
    /// and its interrupt delivered through the hypervisor), more than a 1 Gb/s link's
    /// 12 µs between packets, so a timer per packet is what limited the emulator's rate.
    pub fn wait_until<'a>(
        &self,
        events: &'a mut [libc::epoll_event],
        deadline_ns: u64,
    ) -> io::Result<&'a [libc::epoll_event]> {
        if deadline_ns.saturating_sub(now_ns()) > SPIN_NS {
            return self.wait(events);
        }
        loop {
            let n = self.ready(events, 0)?;
            if n > 0 || now_ns() >= deadline_ns {
                return Ok(&events[..n]);
            }
            std::hint::spin_loop();
        }
    }

    /// Waits (without a timeout: a timerfd bounds every wait) and returns the ready tokens.
    pub fn wait<'a>(
        &self,
        events: &'a mut [libc::epoll_event],
    ) -> io::Result<&'a [libc::epoll_event]> {
        let n = self.ready(events, -1)?;
        Ok(&events[..n])
    }

    /// epoll_wait with `timeout_ms` (0 polls, -1 blocks), resumed after a signal.
    fn ready(&self, events: &mut [libc::epoll_event], timeout_ms: i32) -> io::Result<usize> {
        loop {
            let n = unsafe {
                libc::epoll_wait(
                    self.0.as_raw_fd(),
                    events.as_mut_ptr(),
                    events.len() as i32,
                    timeout_ms,
                )
            };
            if n >= 0 {
                return Ok(n as usize);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

/// A CLOCK_MONOTONIC timerfd armed at absolute times: hrtimer precision, no slack.
pub struct Timer(OwnedFd);

impl Timer {
    pub fn new() -> io::Result<Self> {
        let fd = check(unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        })?;
        Ok(Self(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    pub fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }

    pub fn arm_at(&self, at_ns: u64) -> io::Result<()> {
        // An all-zero it_value would disarm the timer; 1 ns is long past.
        let at_ns = at_ns.max(1);
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (at_ns / 1_000_000_000) as libc::time_t,
                tv_nsec: (at_ns % 1_000_000_000) as libc::c_long,
            },
        };
        check(unsafe {
            libc::timerfd_settime(
                self.0.as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        })?;
        Ok(())
    }

    /// Clears the expiry count so that epoll stops reporting it.
    pub fn clear(&self) {
        let mut buf = [0u8; 8];
        let _ = read(self.0.as_raw_fd(), &mut buf);
    }
}

/// Sets this thread's timer slack to 1 ns (prctl(2) PR_SET_TIMERSLACK): the default 50 µs
/// lets the kernel fire a wake-up that much late to batch it with others.
pub fn minimal_timer_slack() {
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

/// Binds the calling thread to CPU `cpu` (sched_setaffinity(2)); false if refused (no
/// such CPU, or not one this process may use).
pub fn bind_to_cpu(cpu: usize) -> bool {
    if cpu >= libc::CPU_SETSIZE as usize {
        return false;
    }
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// Asks for SCHED_FIFO priority `priority` for the calling thread; false if refused.
pub fn try_realtime(priority: i32) -> bool {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) == 0 }
}

/// Puts the calling thread in the normal class (SCHED_OTHER) at nice -20, the largest
/// share of a CPU a normal thread gets; the setting ends with the thread.
pub fn normal_class_first() {
    let param = libc::sched_param { sched_priority: 0 };
    unsafe {
        libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_OTHER, &param);
        libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, -20);
    }
}
