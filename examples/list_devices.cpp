// Lists the compute devices libgpuopt finds and prints the level-1 plan of
// the one it selects, from C++: the C handles live in unique_ptrs, failures
// become exceptions carrying the library's detail.
//
//   c++ list_devices.cpp $(pkg-config --cflags --libs gpuopt) -o list_devices_cpp
#include <gpuopt/gpuopt.h>

#include <iomanip>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace
{

struct ContextDeleter {
    void operator()(gpuopt_context *ctx) const
    {
        gpuopt_context_destroy(ctx);
    }
};
struct PlanDeleter {
    void operator()(gpuopt_plan *plan) const
    {
        gpuopt_plan_destroy(plan);
    }
};
using Context = std::unique_ptr<gpuopt_context, ContextDeleter>;
using Plan = std::unique_ptr<gpuopt_plan, PlanDeleter>;

class Error : public std::runtime_error
{
  public:
    Error(const std::string &what, gpuopt_status status)
        : std::runtime_error(what + ": " + gpuopt_strerror(status) + " (" + gpuopt_last_error() +
                             ")"),
          status_(status)
    {
    }
    gpuopt_status status() const
    {
        return status_;
    }

  private:
    gpuopt_status status_;
};

void check(gpuopt_status status, const char *what)
{
    if (status != GPUOPT_OK)
        throw Error(what, status);
}

template <typename T> T sized()
{
    T value{};
    value.struct_size = sizeof(T);
    return value;
}

Context make_context()
{
    gpuopt_context *raw = nullptr;
    check(gpuopt_context_create(nullptr, &raw), "creating the context");
    return Context(raw);
}

std::vector<gpuopt_device *> devices(gpuopt_context *ctx)
{
    int32_t count = 0;
    check(gpuopt_device_count(ctx, &count), "counting devices");
    std::vector<gpuopt_device *> out;
    for (int32_t i = 0; i < count; i++) {
        gpuopt_device *dev = nullptr;
        check(gpuopt_device_at(ctx, i, &dev), "reading a device");
        out.push_back(dev);
    }
    return out;
}

const char *type_name(int32_t type)
{
    switch (type) {
    case GPUOPT_DEVICE_TYPE_CPU: return "cpu";
    case GPUOPT_DEVICE_TYPE_GPU: return "gpu";
    case GPUOPT_DEVICE_TYPE_ACCELERATOR: return "accelerator";
    default: return "other";
    }
}

const char *source_name(int32_t source)
{
    static const char *const names[] = {"default", "detected", "benchmark", "cache",
                                        "config",  "env",      "api"};
    return source >= 0 && source < 7 ? names[source] : "?";
}

void print_plan(const gpuopt_plan *plan)
{
    int32_t requested = 0, applied = 0, count = 0, warnings = 0;
    check(gpuopt_plan_level(plan, &requested, &applied), "reading the plan");
    check(gpuopt_plan_knob_count(plan, &count), "reading the plan");
    check(gpuopt_plan_warning_count(plan, &warnings), "reading the plan");
    std::cout << "plan: level " << requested << " requested, level " << applied << " applied, "
              << count << " knob(s)\n";
    for (int32_t i = 0; i < count; i++) {
        auto knob = sized<gpuopt_knob>();
        check(gpuopt_plan_knob_at(plan, i, &knob), "reading a knob");
        std::cout << "  " << std::left << std::setw(24) << knob.name << " = " << std::setw(16)
                  << knob.value << " tier " << knob.tier << ", " << source_name(knob.source) << ": "
                  << knob.reason << "\n";
    }
    for (int32_t i = 0; i < warnings; i++) {
        const char *text = nullptr;
        check(gpuopt_plan_warning_at(plan, i, &text), "reading a warning");
        std::cout << "  warning: " << text << "\n";
    }
}

} // namespace

int main()
{
    try {
        std::cout << "libgpuopt " << gpuopt_version() << "\n";
        Context ctx = make_context();

        gpuopt_device *selected = nullptr;
        check(gpuopt_device_select(ctx.get(), nullptr, &selected), "selecting a device");

        std::vector<gpuopt_device *> all = devices(ctx.get());
        std::cout << all.size() << " device(s):\n";
        for (gpuopt_device *dev : all) {
            auto info = sized<gpuopt_device_info>();
            check(gpuopt_device_get_info(dev, &info), "reading a device");
            std::cout << (dev == selected ? '*' : ' ') << ' ' << std::left << std::setw(10)
                      << info.id << ' ' << std::setw(4) << type_name(info.type) << ' ' << info.name;
            std::string arch = std::string(info.arch_family) +
                               (info.arch_family[0] && info.arch_name[0] ? " " : "") +
                               info.arch_name;
            if (!arch.empty())
                std::cout << " [" << arch << "]";
            if (info.compute_units > 0)
                std::cout << ", " << info.compute_units << " compute units";
            if (info.memory_bytes > 0)
                std::cout << ", " << (info.memory_bytes >> 20) << " MiB";
            std::cout << "\n";
        }

        gpuopt_plan *raw = nullptr;
        check(gpuopt_plan_create(ctx.get(), selected, 1, &raw), "planning");
        Plan plan(raw); // destroyed before ctx: declared after it
        print_plan(plan.get());
        return 0;
    } catch (const Error &e) {
        std::cerr << "list_devices_cpp: " << e.what() << "\n";
        return 1;
    }
}
